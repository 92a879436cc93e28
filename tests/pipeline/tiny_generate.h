// The tiny one-stage golden model (tests/golden/pipeline/t2v_audio_one_stage: checkpoint and recorded text contexts)
// as a `generate` request, and a fresh temporary folder per test: shared by the generate tests of this suite.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "stages/generate.h"

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

// 9 frames of 96x64, 2 steps with STG on block 1, f32: seconds on the tiny model.
inline stages::GenerateRequest tiny_generate_request(const std::filesystem::path& output) {
  stages::GenerateRequest r;
  r.checkpoint = kTinyGenerateCase + "weights.safetensors";
  r.text_embeddings = kTinyGenerateCase + "inputs.safetensors";
  r.output = output.string();
  r.frames = 9;
  r.height = 64;
  r.width = 96;
  r.steps = 2;
  r.video_guidance.stg_blocks = r.audio_guidance.stg_blocks = std::vector<int64_t>{1};
  r.compute = DType::F32;
  return r;
}

}  // namespace ltx::test
