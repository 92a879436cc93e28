// What ltx::Engine::generate returns: every item's frames and audio in memory, the settings after the model's
// defaults, and what each stage cost. Writing files is separate (ltx/outputs.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ltx/options.hpp"
#include "ltx/request.hpp"

namespace ltx {

struct Video {
  std::string prompt;           // empty when the request gave text embeddings; the enhanced one with enhance_prompt
  std::string original_prompt;  // with enhance_prompt: the prompt as given
  int64_t frames = 0, height = 0, width = 0;
  double fps = 0.0;
  std::vector<uint8_t> rgb;  // [frames, height, width, 3], row-major
  int64_t sample_rate = 0, channels = 0;
  std::vector<float> audio;  // [channels, samples], each channel contiguous, in [-1, 1]
  int64_t audio_samples() const { return channels > 0 ? static_cast<int64_t>(audio.size()) / channels : 0; }
};

// The guidance one stream ran with, after the model's defaults.
struct GuidanceValues {
  double cfg = 0, stg = 0, rescale = 0, modality = 0;
  std::vector<int64_t> stg_blocks;
  int skip_step = 0;  // the guider reuses the previous step's x0 when step % (skip_step + 1) != 0; 0: never
};

struct StageTime {
  std::string stage;       // "load models", "encode prompt", "denoise", "decode"
  double seconds = 0;      // wall time
  double cpu_seconds = 0;  // process CPU time, all threads
};

// A recording of every noise tensor a run drew (GenerateRequest::record_noise); written by save().
class NoiseRecording;

struct GenerateResult {
  std::vector<Video> videos;  // one per item, prompt-major
  EngineOptions model;        // what made it
  GenerateRequest request;    // as asked, with `steps` after the model's default
  std::string model_version, negative_prompt;
  GuidanceValues video_guidance, audio_guidance;
  std::string decode_strategy;  // the video decode's plan and its planned peak
  // This call's stages in order; the engine's first result also carries its "load models" stage, first.
  std::vector<StageTime> stages;
  double seconds = 0;          // wall time of the call, plus the engine's load when `stages` holds it
  int64_t peak_rss_bytes = 0;  // the process's peak resident memory after the call
  std::shared_ptr<const NoiseRecording> noise_recording;  // when the request asked for it
};

}  // namespace ltx
