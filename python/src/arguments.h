// The Python arguments of ltx.Engine() and Engine.generate() as the C++ API's EngineOptions and GenerateRequest.
// Options left None keep the API's defaults. A wrong type raises TypeError; a wrong value ltx::Error
// (InvalidRequest), as the engine's own checks do.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ltx/options.hpp"
#include "ltx/request.hpp"

namespace ltx::python {

using Path = std::optional<std::filesystem::path>;

struct EngineArgs {
  Path checkpoint, text_encoder, mmproj, dit, dit_config, upsampler;  // mmproj: a GGUF text encoder's vision tower
  nanobind::object loras;                      // None or a list of paths and (path, strength) tuples
  nanobind::object distilled_lora;             // None, a path or a (path, strength) tuple
  std::optional<float> distilled_lora_stage1;  // its strength in stage 1 too (the HQ pipeline)
  bool lora_allow_partial = false;
  std::string precision;  // "production" or "validation"
  int threads = 0;
  nanobind::object memory_budget;  // None, bytes (int) or a size like "8G" (ltx::parse_size)
  std::string backend;             // EngineOptions::backend
  std::string xla_plugin;          // EngineOptions::xla_plugin
};

// Needs the GIL.
EngineOptions to_engine_options(const EngineArgs& args);

// Whether `options` name no model, so that the embedded default model is meant (as `ltx generate` decides).
bool names_no_model(const EngineOptions& options);

struct RequestArgs {
  std::optional<std::string> negative_prompt;
  std::optional<int64_t> width, height, frames;
  std::optional<double> fps;
  std::optional<int> steps;
  std::optional<uint64_t> seed;
  nanobind::object images;  // None or a list of paths, (path, frame, strength, crf) tuples or dicts of those keys
  bool two_stage = false, distilled = false;
  std::optional<float> cfg, stg, rescale, modality;
  std::optional<std::vector<int64_t>> stg_blocks;  // both streams, as `ltx generate --stg-blocks`
  std::optional<float> audio_cfg, audio_stg, audio_rescale, audio_modality;
  std::optional<int> video_skip_step, audio_skip_step;  // each stream's guider apart, as --video/audio-skip-step
  std::string sampler = "euler";                        // "euler" or "res2s", as --sampler
  bool keyframe_interpolation = false;
  std::optional<std::string> audio;  // audio-to-video: the file, as --audio
  double audio_start = 0.0;
  std::optional<double> audio_max_duration;
  nanobind::object retake;            // None or {"path", "start", "end"[, "keep_video", "keep_audio"]}
  nanobind::object reference_videos;  // IC-LoRA: None or a list of paths and (path, strength) tuples, as --video
  double conditioning_strength = 1.0;
  Path conditioning_mask;
  bool enhance_prompt = false;  // each prompt rewritten by the text encoder first, as --enhance-prompt
};

// With `default_model`, frames, height, width and steps not given take embedded_default_request()'s values (as
// `ltx generate` does with no model named). Needs the GIL.
GenerateRequest to_request(std::vector<std::string> prompts, int64_t batch, const RequestArgs& args,
                           bool default_model);

}  // namespace ltx::python
