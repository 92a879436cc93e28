// Progress of a generation, per stage and per step: what the denoising loop and the decode report. The public API
// turns it into ltx::ProgressEvent callbacks and checks for cancellation there (src/api/callback_progress.h).
//
// A stage ("load models", "encode prompt", "denoise", "decode") begins, may announce steps (each Euler
// loop announces one per sigma interval, so the two loops of a two-stage run add up), reports each finished step,
// and ends. The denoising loop reports through its Observer (progress_observer below), which every pipeline
// already threads through to each step; the decode calls the reporter directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "stages/denoise.h"

namespace ltx::stages {

class ProgressReporter {
 public:
  virtual ~ProgressReporter() = default;
  virtual void begin(std::string_view stage) = 0;
  // `n` more steps belong to the current stage (called again by a later loop of the same stage).
  virtual void add_steps(int64_t n) = 0;
  virtual void step() = 0;  // one step of the current stage finished
  virtual void end() = 0;
  virtual void note(std::string_view message) = 0;  // a line of information (e.g. the model file made)
};

// Null-safe calls for the stages, which take an optional reporter.
inline void progress_add_steps(ProgressReporter* p, int64_t n) {
  if (p) p->add_steps(n);
}
inline void progress_step(ProgressReporter* p) {
  if (p) p->step();
}

// An Observer that turns what the pipelines report into progress: "sigmas" (with any stage prefix) announces
// sigmas - 1 steps, and "latents.audio.stepNN", the last tensor each Euler step reports, finishes one. Empty when
// `progress` is null. `also` (optional) still receives everything.
Observer progress_observer(ProgressReporter* progress, Observer also = {});

// Counts steps and times the current stage: what a reporter tells of each step.
class ProgressState {
 public:
  void begin(std::string_view stage);
  void add_steps(int64_t n) { total_ += n; }
  void step() { ++done_; }
  const std::string& stage() const { return stage_; }
  int64_t done() const { return done_; }
  int64_t total() const { return total_; }
  double elapsed() const;  // seconds since the stage began
  // Seconds left at the stage's mean step time so far; negative when unknown (no step done, no total).
  double eta() const;

 private:
  std::string stage_;
  int64_t done_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace ltx::stages
