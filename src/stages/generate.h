// One generation on loaded models (stages/loaded_models.h): prompts or text contexts in, every item's RGB frames and
// waveform out, in memory, with what the run resolved (steps, guidance after the model's defaults) and what each
// stage cost. Writing files is the caller's (src/api/outputs.cpp); checking the request too (src/api).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/params.h"
#include "stages/av_stage.h"
#include "stages/denoise.h"
#include "stages/ic_lora_input.h"
#include "stages/image_conditioning.h"
#include "stages/loaded_models.h"
#include "stages/progress.h"

namespace ltx::stages {

// Guidance settings the user may override; unset fields keep the model's defaults.
struct GuiderOverrides {
  std::optional<float> cfg, stg, rescale, modality;
  std::optional<std::vector<int64_t>> stg_blocks;
  std::optional<int> skip_step;
};

struct GenerateRequest {
  // One prompt per prompt-level item; each gives `batch` items (prompt-major: item p·batch + s is sample s of
  // prompt p). Unused with `text_embeddings`.
  std::vector<std::string> prompts;
  int64_t batch = 1;
  std::optional<std::string> negative_prompt;  // default: the official one
  // Instead of the loaded text encoder: safetensors with context.{video,audio}.{positive,negative} (one prompt).
  std::string text_embeddings;
  // Each prompt rewritten by the text encoder first (stages/prompt_enhancer.h, seeded by `seed`); the system
  // prompt: `enhance_system_prompt`, or the built-in one when empty.
  bool enhance_prompt = false;
  std::string enhance_system_prompt;
  int64_t enhance_max_new_tokens = 512;
  std::vector<ImageConditionInput> images;  // frame 0 by latent replacement, others as keyframes
  bool keyframe_interpolation = false;      // every image as keyframe tokens (keyframe_interpolation.py)
  // IC-LoRA (ic_lora.py): reference videos read at the stage-1 size over the LoRAs' reference_downscale_factor,
  // at most `frames` frames, appended to stage 1 after the images; stage 2 then runs without the --lora files.
  // `conditioning_strength` weighs the attention between them and the generated tokens (1: no mask), scaled per
  // region and frame by the grey `conditioning_mask` video when given (read at the stage-1 size).
  std::vector<ReferenceVideoInput> references;
  double conditioning_strength = 1.0;
  std::string conditioning_mask;
  // Audio-to-video: the file's audio from `audio_start` s, at most `audio_max_duration` s (unset: the video's
  // duration, a2v_audio_max_duration), encoded and held fixed; the output carries that clip. Empty:
  // text-to-audio-and-video.
  std::string audio;
  double audio_start = 0.0;
  std::optional<double> audio_max_duration;
  // Retake (retake.py): this video file's [retake_start, retake_end) regenerated, the rest kept (a kept stream:
  // nothing of it regenerated); frames, size and fps must be the file's. Empty: no retake.
  std::string retake;
  double retake_start = 0.0, retake_end = 0.0;
  bool retake_keep_video = false, retake_keep_audio = false;
  bool two_stage = false;  // needs LoadedModels::upsampler
  bool distilled = false;  // a distilled DiT: fixed sigma lists, no guidance
  Sampler sampler = Sampler::Euler;
  int64_t frames = 121, height = 512, width = 768;
  double fps = 24.0;
  int steps = 0;  // 0: the model's default
  uint64_t seed = 10;
  GuiderOverrides video_guidance, audio_guidance;
  std::string replay_noise;   // a recording (NoiseRecorder::save) to draw every noise tensor from
  bool record_noise = false;  // keep every noise tensor drawn in GenerateReport::noise
  // The run's memory budget (stages/memory_plan.h: phases, resident and streamed weights; the video decode's
  // strategy, video_vae_plan.h); 0: no plan, the weights left to the OS and the decode whole.
  size_t memory_budget_bytes = 0;
};

struct GeneratedItem {
  std::string prompt;           // empty with text embeddings; the enhanced one with enhance_prompt
  std::string original_prompt;  // with enhance_prompt: the prompt as given
  std::vector<uint8_t> rgb;     // [frames, height, width, 3]
  std::vector<float> audio;     // [audio_channels, audio_samples] in [-1, 1]
};

struct GenerateReport {
  std::vector<GeneratedItem> items;  // prompt-major
  int64_t frames = 0, height = 0, width = 0;
  int64_t audio_sample_rate = 0, audio_channels = 0, audio_samples = 0;
  std::vector<std::pair<std::string, double>> stage_seconds;
  std::vector<std::pair<std::string, double>> stage_cpu_seconds;  // process CPU time (all threads) per stage
  // The settings after the model's defaults were applied (for the sidecar).
  std::string model_version, negative_prompt;
  int steps = 0;
  std::optional<double> audio_max_duration;  // audio-to-video: the seconds of the file read (a2v_audio_max_duration)
  AvGuidance guidance;
  std::string decode_strategy;  // the video decode's strategy and planned peak (DecodeStrategy::describe)
  std::string memory_plan;      // the run's memory plan (MemoryPlan::describe); empty without a budget
  // Every noise tensor the run drew, in order (noise.0000, ...), as one batch drew them; when record_noise.
  std::vector<std::pair<std::string, Tensor>> noise;
};

// How many generations the request makes: its prompts (at least one) times `batch`, all through the DiT together.
int64_t request_items(const GenerateRequest& request);

// Precomputed text contexts from a safetensors file: `context.{video,audio}.{positive,negative}`, or the output of
// `ltx encode POSITIVE [NEGATIVE]` (prompt 0 positive, prompt 1 negative).
TextContexts load_text_contexts(const std::string& path);

// `progress` (optional) hears each stage ("encode prompt", "denoise", "decode"), the denoising steps and the
// decode's three parts; whatever it throws ends the run. `models` keep no state of the run but the DiT's LoRA set.
GenerateReport generate(LoadedModels& models, const GenerateRequest& request, ProgressReporter* progress = nullptr);

}  // namespace ltx::stages
