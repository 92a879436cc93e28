// The text-to-video+audio sampling flows, from text contexts to final latents:
//   one stage  (ltx_pipelines/ti2vid_one_stage.py): LTX2Scheduler sigmas, guided Euler loop at the target size;
//   two stages (ltx_pipelines/ti2vid_two_stages.py): the same at half size, x2 latent upsample with the VAE
//              statistics, then a refine on the stage-2 distilled sigmas with noise re-injected at σ0 from the
//              same noise source, one positive pass per step.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "models/ltx/upsampler/upsampler.h"
#include "stages/av_stage.h"

namespace ltx::stages {

struct GenerationSpec {
  int64_t batch = 1;
  int64_t frames = 121, height = 512, width = 768;  // output pixels
  double fps = 24.0;
  int steps = 30;  // stage 1
  AvGuidance guidance;
  Sampler sampler = Sampler::Euler;  // every stage's loop
  DType noise_dtype = DType::F32;
  // The distilled model (ltx_pipelines/distilled.py): stage 1 on distilled_sigmas_stage1() with one positive pass
  // per step (no guidance; `steps` and `guidance` are unused); stage 2 is unchanged.
  bool distilled = false;
  // Image / keyframe conditionings for a stage of the given output pixel size (the two-stage flow asks at half
  // and at full size, as ti2vid_two_stages.py encodes the images once per stage); empty: text only.
  std::function<std::vector<VideoCondition>(int64_t height, int64_t width)> video_conditions;
  // IC-LoRA (ic_lora.py): the reference videos' conditions (Placement::Reference, encoded at the stage-1 size over
  // the LoRAs' downscale factor), appended after the images in stage 1 only; stage 2 sees the images alone.
  std::vector<VideoCondition> references;
  // Audio-to-video (a2vid_two_stage.py): the encoded input audio [batch, z, T, M] at the audio latent shape, held
  // fixed in every stage; stage 1 then guides the audio stream not at all (MultiModalGuiderParams()).
  Tensor audio_latent;
  // Retake (retake.py): one stage at the source's size starting from its encoded latents, regenerating only the
  // tokens whose time span meets [start, end) (TemporalRegionMask); a kept stream's mask is 0 everywhere. No audio
  // latent: the source has no audio, which is then generated throughout.
  struct Retake {
    Tensor video_latent, audio_latent;  // [B, C, F, H, W], [B, z, T, M] or empty
    double start = 0.0, end = 0.0;
    bool keep_video = false, keep_audio = false;
  };
  std::optional<Retake> retake;
};

// Latent shapes for a DiT: video channels = in_channels (patch size 1); audio tokens are channels x 16 mel bins
// (ltx_core AudioLatentShape's default mel_bins), so channels = audio_in_channels / 16.
VideoLatentShape video_latent_shape(const ltxm::DitConfig& dit, int64_t batch, int64_t frames, int64_t height,
                                    int64_t width);
AudioLatentShape audio_latent_shape(const ltxm::DitConfig& dit, int64_t batch, int64_t frames, double fps);

// Observed: sigmas, the stage's tensors, latents.{video,audio}.final.
AvLatents run_one_stage(ltxm::Dit& dit, const GenerationSpec& spec, const TextContexts& text, NoiseSource& noise,
                        const Observer& observe = {});

struct TwoStageModels {
  ltxm::Dit& stage1;
  ltxm::Dit& stage2;  // the distilled weights (or the stage-1 DiT with the distilled LoRA fused)
  const upsampler::LatentUpsampler& upsampler;
  const video_vae::LatentStats& video_stats;
  // Called after the upsample, before stage 2 runs (e.g. LoraWeights::use_stage2 switching the one resident DiT).
  std::function<void()> before_stage2 = {};
};

// Observed: stage1.* and stage2.* (each stage's names plus sigmas and, for stage 1, latents.*.final),
// upsampled.video, latents.{video,audio}.final. The audio returned is stage 2's.
AvLatents run_two_stage(const TwoStageModels& models, const GenerationSpec& spec, const TextContexts& text,
                        NoiseSource& noise, const Observer& observe = {});

}  // namespace ltx::stages
