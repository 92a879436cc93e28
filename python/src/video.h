// ltx.Video: one generated item, its frames and audio as numpy arrays over the engine's own buffers (no copy).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ltx/result.hpp"

namespace ltx::python {

struct PyVideo {
  std::shared_ptr<const Video> video;  // also owned by the arrays, through their capsule
  nanobind::object frames;             // numpy uint8 [frames, height, width, 3], read-only view of video->rgb
  nanobind::object audio;              // numpy float32 [channels, samples], read-only view of video->audio
  uint64_t seed = 0;
  int steps = 0;       // after the model's default
  double seconds = 0;  // the call's wall time (with the engine's load on its first call)
  std::vector<std::pair<std::string, double>> stages;  // (stage, seconds)
};

// One PyVideo per item, prompt-major. Needs the GIL.
std::vector<PyVideo> to_videos(GenerateResult&& result);

void bind_video(nanobind::module_& m);

}  // namespace ltx::python
