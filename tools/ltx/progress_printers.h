// How `ltx generate` shows progress events (ltx/progress.hpp): for people, on stderr, one line per stage rewritten
// in place with '\r' on a terminal ("denoise  5/8  1.2 s  ETA 0.7 s") or a plain line per stage start, step and end
// otherwise; for programs (`--progress json`, stdout), one JSON object per line, flushed at once:
//   {"event":"begin","stage":"denoise"}
//   {"event":"step","stage":"denoise","step":3,"total":8,"elapsed":0.91,"eta":1.52}
//   {"event":"end","stage":"denoise","steps":8,"elapsed":2.43}
//   {"event":"note","message":"..."}
// elapsed and eta in seconds since the stage began; eta is null while unknown. (bench/first_generation.sh and
// tests/cli read these lines; generate.cpp adds the "done" line of each run.)
#pragma once

#include <cstdio>
#include <string>

#include "ltx/progress.hpp"

namespace ltx::cli {

class TextProgressPrinter {
 public:
  TextProgressPrinter(std::FILE* out, bool is_terminal) : out_(out), terminal_(is_terminal) {}
  void print(const ProgressEvent& e);
  // A callback printing here; this printer must outlive it.
  ProgressCallback callback() {
    return [this](const ProgressEvent& e) { print(e); };
  }

 private:
  std::FILE* out_;
  bool terminal_;
  bool line_open_ = false;  // a '\r' line is on screen without its newline
};

class JsonProgressPrinter {
 public:
  explicit JsonProgressPrinter(std::FILE* out) : out_(out) {}
  void print(const ProgressEvent& e);
  ProgressCallback callback() {
    return [this](const ProgressEvent& e) { print(e); };
  }

 private:
  std::FILE* out_;
};

}  // namespace ltx::cli
