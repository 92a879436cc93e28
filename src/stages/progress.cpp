#include "stages/progress.h"

#include <algorithm>

namespace ltx::stages {

Observer progress_observer(ProgressReporter* progress, Observer also) {
  if (!progress) return also;
  return [progress, also = std::move(also)](const std::string& name, const Tensor& t) {
    const auto ends_with = [&](std::string_view tail) {
      return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends_with("sigmas") && t.rank() == 1 && t.dim(0) >= 2) progress->add_steps(t.dim(0) - 1);
    const size_t at = name.rfind("latents.audio.step");
    if (at != std::string::npos && (at == 0 || name[at - 1] == '.')) progress->step();
    if (also) also(name, t);
  };
}

void ProgressState::begin(std::string_view stage) {
  stage_ = stage;
  done_ = total_ = 0;
  t0_ = std::chrono::steady_clock::now();
}

double ProgressState::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

double ProgressState::eta() const {
  if (done_ <= 0 || total_ <= 0) return -1.0;
  return elapsed() / static_cast<double>(done_) * static_cast<double>(std::max<int64_t>(total_ - done_, 0));
}

}  // namespace ltx::stages
