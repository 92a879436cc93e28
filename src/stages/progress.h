// Progress of a generation, per stage and per step: what the denoising loop and the decode report, and the three
// ways `ltx generate` shows it (a terminal line with an ETA, JSON lines for programs, nothing).
//
// A stage ("load models", "encode prompt", "denoise", "decode", "write") begins, may announce steps (each Euler
// loop announces one per sigma interval, so the two loops of a two-stage run add up), reports each finished step,
// and ends. The denoising loop reports through its Observer (progress_observer below), which every pipeline
// already threads through to each step; the decode calls the reporter directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
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

// Counts steps and times the current stage; the reporters below format what it knows.
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

// Human-readable, on `out` (stderr): on a terminal one line per stage rewritten in place with '\r' as steps
// finish ("denoise  5/8  1.2 s  ETA 0.7 s"); otherwise a plain line per stage start, step and end.
class TextProgress final : public ProgressReporter {
 public:
  explicit TextProgress(std::FILE* out, bool is_terminal);
  void begin(std::string_view stage) override;
  void add_steps(int64_t n) override { state_.add_steps(n); }
  void step() override;
  void end() override;
  void note(std::string_view message) override;

 private:
  std::FILE* out_;
  bool terminal_;
  bool line_open_ = false;  // a '\r' line is on screen without its newline
  ProgressState state_;
};

// One JSON object per line on `out` (`ltx generate --progress json`: stdout), flushed at once:
//   {"event":"begin","stage":"denoise"}
//   {"event":"step","stage":"denoise","step":3,"total":8,"elapsed":0.91,"eta":1.52}
//   {"event":"end","stage":"denoise","steps":8,"elapsed":2.43}
//   {"event":"note","message":"..."}
// elapsed and eta in seconds since the stage began; eta is null while unknown.
class JsonProgress final : public ProgressReporter {
 public:
  explicit JsonProgress(std::FILE* out) : out_(out) {}
  void begin(std::string_view stage) override;
  void add_steps(int64_t n) override { state_.add_steps(n); }
  void step() override;
  void end() override;
  void note(std::string_view message) override;

 private:
  void line(const std::string& json);
  std::FILE* out_;
  ProgressState state_;
};

// `--quiet`.
class SilentProgress final : public ProgressReporter {
 public:
  void begin(std::string_view) override {}
  void add_steps(int64_t) override {}
  void step() override {}
  void end() override {}
  void note(std::string_view) override {}
};

}  // namespace ltx::stages
