// `ltx generate` as a library call: a request (model files, prompt or text embeddings, size, sampling settings)
// in, an MP4 (H.264 + AAC) out. Checks the request before any heavy work and writes the output atomically.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "pipeline/params.h"
#include "stages/denoise.h"

namespace ltx::stages {

// Guidance settings the user may override; unset fields keep the model's defaults.
struct GuiderOverrides {
  std::optional<float> cfg, stg, rescale, modality;
  std::optional<std::vector<int64_t>> stg_blocks;
};

struct GenerateRequest {
  std::string checkpoint;       // official single-file safetensors
  std::string text_encoder;     // Gemma 3: GGUF file or Hugging Face folder
  std::string text_embeddings;  // instead of a text encoder: safetensors with context.{video,audio}.{positive,negative}
  std::string upsampler;        // x2 spatial upsampler file (two stages)
  std::string prompt;
  std::optional<std::string> negative_prompt;  // default: the official one
  std::string output;                          // .mp4
  bool two_stage = false;
  int64_t frames = 121, height = 512, width = 768;
  double fps = 24.0;
  int steps = 0;  // 0: the model's default
  uint64_t seed = 10;
  GuiderOverrides video_guidance, audio_guidance;
  std::string record_noise, replay_noise;
  DType compute = DType::BF16;
};

struct GenerateReport {
  int64_t frames = 0, height = 0, width = 0;
  int64_t audio_sample_rate = 0, audio_samples = 0;
  std::vector<std::pair<std::string, double>> stage_seconds;
};

using Progress = std::function<void(const std::string& message)>;

// Precomputed text contexts from a safetensors file: `context.{video,audio}.{positive,negative}`, or the output of
// `ltx encode POSITIVE [NEGATIVE]` (prompt 0 positive, prompt 1 negative).
TextContexts load_text_contexts(const std::string& path);

// Checks the request (sizes, files, conflicting options) and throws one ltx::Error naming every problem, before
// loading anything.
void check_request(const GenerateRequest& request);

GenerateReport generate(const GenerateRequest& request, const Progress& progress = {});

}  // namespace ltx::stages
