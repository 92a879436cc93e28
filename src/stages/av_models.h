// Loading the models a generation needs from an official single-file checkpoint: the DiT
// (model.diffusion_model.*), the video VAE decoder and statistics (vae.*), the audio VAE decoder (audio_vae.*) and
// the vocoder (vocoder.*), each configured from the file's `config` metadata; and a latent upsampler from its own
// file (flat `config`, no prefix) or from a prefix inside one.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/json.h"
#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/dit/dit.h"
#include "models/ltx/upsampler/upsampler.h"
#include "models/ltx/video_vae/video_vae.h"
#include "models/ltx/vocoder/vocoder.h"
#include "nn/weight_source.h"

namespace ltx::stages {

struct AvModelParts {
  bool dit = true;  // false: the DiT comes from elsewhere (generate --dit)
  bool video_decoder = true;
  bool audio_decoder = true;  // audio VAE decoder and vocoder
};

struct AvModels {
  const Backend* backend = nullptr;  // what every model here runs on (the engine's)
  Json config;                       // the checkpoint's `config` metadata
  std::string model_version;         // the checkpoint's `model_version` metadata, or empty
  bool embedded_default = false;  // the embedded default model (`ltx_default_model` metadata: stages/default_model.h)
  std::unique_ptr<ltxm::Dit> dit;
  video_vae::LatentStats video_stats;
  std::optional<video_vae::VideoDecoder> video_decoder;
  std::optional<audio_vae::AudioDecoder> audio_decoder;
  std::optional<vocoder::Vocoder> vocoder;
};

// Fails with one error per component naming every missing, mis-shaped or unexpected key. The VAE encoder's
// weights are ignored (a text-to-video run does not encode).
AvModels load_av_models(const std::shared_ptr<const WeightSource>& checkpoint, DType compute, const Backend& backend,
                        const AvModelParts& parts = {});

// An upsampler whose flat config is the metadata entry `config_key` of `source` and whose tensors sit under
// `prefix` ("" for an official upsampler file).
upsampler::LatentUpsampler load_upsampler(const std::shared_ptr<const WeightSource>& source, DType compute,
                                          const std::string& prefix = "", const std::string& config_key = "config");

}  // namespace ltx::stages
