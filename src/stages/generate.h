// `ltx generate` as a library call: a request (model files, prompt or text embeddings, size, sampling settings)
// in, an MP4 (H.264 + AAC) out, and on request a WAV, PNG frames and a JSON sidecar. Checks the request before any
// heavy work; every output is written under a temporary name and renamed into place only when all are complete
// (io/staged_outputs.h), so a failed run leaves none of them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "pipeline/params.h"
#include "stages/av_models.h"
#include "stages/denoise.h"
#include "stages/image_conditioning.h"
#include "stages/lora_weights.h"
#include "stages/progress.h"
#include "stages/text_encoder.h"

namespace ltx::stages {

// Guidance settings the user may override; unset fields keep the model's defaults.
struct GuiderOverrides {
  std::optional<float> cfg, stg, rescale, modality;
  std::optional<std::vector<int64_t>> stg_blocks;
};

struct GenerateRequest {
  std::string checkpoint;       // official single-file safetensors
  std::string dit;              // the DiT from here instead: official file, Diffusers folder or GGUF (dit_checkpoint.h)
  std::string dit_config;       // configuration for a GGUF DiT that carries none (default: the checkpoint's)
  std::string text_encoder;     // Gemma 3: GGUF file or Hugging Face folder
  std::string text_embeddings;  // instead of a text encoder: safetensors with context.{video,audio}.{positive,negative}
  std::string upsampler;        // x2 spatial upsampler file (two stages)
  std::string prompt;
  // Several prompts (`--prompt` repeated, `--prompts-file`): a batch with one item per prompt; `prompt` is then
  // empty. Each prompt gives `batch` items (prompt-major: item p·batch + s is sample s of prompt p).
  std::vector<std::string> prompts;
  int64_t batch = 1;  // samples per prompt (per the text embeddings' prompt without a text encoder)
  std::optional<std::string> negative_prompt;  // default: the official one
  std::vector<ImageConditionInput> images;     // --image: frame 0 by latent replacement, others as keyframes
  std::string output;                          // .mp4
  std::string wav;                             // also the waveform as 16-bit PCM WAV at the vocoder's rate
  std::string frames_dir;                      // also each frame as DIR/frame_00000.png ...
  std::string sidecar;                         // also a JSON record of the run (stages/sidecar.h)
  bool two_stage = false;
  bool distilled = false;                        // a distilled DiT: fixed sigma lists, no guidance
  std::vector<ltxm::LoraSpec> loras;             // --lora, every stage
  std::optional<ltxm::LoraSpec> distilled_lora;  // --distilled-lora, the stage-2 refine only
  bool lora_allow_partial = false;               // skip LoRA keys that name no DiT layer
  int64_t frames = 121, height = 512, width = 768;
  double fps = 24.0;
  int steps = 0;  // 0: the model's default
  uint64_t seed = 10;
  GuiderOverrides video_guidance, audio_guidance;
  std::string record_noise, replay_noise;
  DType compute = DType::BF16;
  // --memory-budget ("8G"): what the video decode may use beyond the resident weights; unset: MemAvailable. The
  // decode planner (video_vae_plan.h) picks whole / split batch / temporal chunks / spatial tiles from it.
  std::optional<std::string> memory_budget;
};

struct GenerateReport {
  int64_t frames = 0, height = 0, width = 0;
  int64_t audio_sample_rate = 0, audio_samples = 0;
  std::vector<std::pair<std::string, double>> stage_seconds;
  std::vector<std::pair<std::string, double>> stage_cpu_seconds;  // process CPU time (all threads) per stage
  // The settings after the model's defaults were applied (for the sidecar).
  std::string model_version, negative_prompt;
  int steps = 0;
  AvGuidance guidance;
  int64_t items = 1;                 // generations made together (request_items)
  std::vector<std::string> written;  // output files and folders, once committed; item 0's MP4 first
  std::string decode_strategy;       // the video decode's strategy and planned peak (DecodeStrategy::describe)
};

// Models kept between generate() calls of one process (`ltx generate --repeat N`): loaded by the first call and
// reused, compiled plans included, while the checkpoint, text encoder, upsampler and precision stay the same.
// Anything else that changes the resident weights (LoRAs) must be part of `key`.
struct ModelCache {
  std::string key;
  std::shared_ptr<const WeightSource> checkpoint;
  std::optional<AvModels> models;
  std::optional<upsampler::LatentUpsampler> upsampler;
  std::unique_ptr<PromptEncoder> encoder;
  std::unique_ptr<LoraWeights> lora;     // after `models`: it refers to their DiT
  ProgressReporter* progress = nullptr;  // the current call's, for the LoRA fusion lines
};

// The prompts of a request, one per prompt-level item: `prompts`, else {prompt}.
std::vector<std::string> request_prompts(const GenerateRequest& request);
// How many generations the request makes: its prompts times `batch` (all through the DiT together).
int64_t request_items(const GenerateRequest& request);
// The file (or folder) item `item` of `items` is written to: `path` itself for one item, else `path` with `_i`
// before its extension (out.mp4 -> out_0.mp4, out_1.mp4; frames -> frames_0, frames_1).
std::string item_path(const std::string& path, int64_t item, int64_t items);

// Precomputed text contexts from a safetensors file: `context.{video,audio}.{positive,negative}`, or the output of
// `ltx encode POSITIVE [NEGATIVE]` (prompt 0 positive, prompt 1 negative).
TextContexts load_text_contexts(const std::string& path);

// Checks the request (sizes, files, conflicting options) and throws one ltx::Error naming every problem, before
// loading anything.
void check_request(const GenerateRequest& request);

// `progress` (optional) hears each stage, the denoising steps and the decode steps; `cache` (optional) keeps
// the models for the next call.
GenerateReport generate(const GenerateRequest& request, ProgressReporter* progress = nullptr,
                        ModelCache* cache = nullptr);

}  // namespace ltx::stages
