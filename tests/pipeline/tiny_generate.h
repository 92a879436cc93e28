// The tiny one-stage golden model (tests/golden/pipeline/t2v_audio_one_stage: checkpoint and recorded text contexts)
// as public-API engine options and a request, and a fresh temporary folder per test: shared by the generate tests
// of this suite.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ltx/ltx.hpp"

namespace ltx::test {

inline const std::string kTinyGenerateCase =
    std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";

// An empty folder under the system temp dir, unique per process: `<tmp>/ltx_<suite>_<name>_<pid>`.
inline std::filesystem::path fresh_temp_dir(const std::string& suite, const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("ltx_" + suite + "_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The golden checkpoint in f32 (validation precision), no text encoder: requests bring the recorded contexts.
inline EngineOptions tiny_engine_options() {
  EngineOptions o;
  o.checkpoint = kTinyGenerateCase + "weights.safetensors";
  o.precision = Precision::Validation;
  return o;
}

// 9 frames of 96x64, 2 steps with STG on block 1: seconds on the tiny model.
inline GenerateRequest tiny_generate_request() {
  GenerateRequest r;
  r.text_embeddings = kTinyGenerateCase + "inputs.safetensors";
  r.frames = 9;
  r.height = 64;
  r.width = 96;
  r.steps = 2;
  r.video_guidance.stg_blocks = r.audio_guidance.stg_blocks = std::vector<int64_t>{1};
  return r;
}

}  // namespace ltx::test
