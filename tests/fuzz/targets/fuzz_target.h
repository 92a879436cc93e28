// A fuzz target: any bytes in; out, an ltx::Error (a clear refusal) or a result, never a crash, a sanitizer report,
// a leak, a hang or an allocation out of proportion to the input. Each targets/<name>.cpp defines
// LTX_FUZZ_TARGET(<name>); libfuzzer/main.cpp makes it a libFuzzer binary (scripts/fuzz), and
// tests/fuzz/replay_test.cpp replays its corpus and regression inputs in every test run (under ASan and UBSan in CI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#define LTX_FUZZ_TARGET(name) int ltx_fuzz_##name(const uint8_t* data, size_t size)

namespace ltx::fuzz {

// The input written to a file the readers can map (they take paths): one per process and target, in /dev/shm where
// there is one, rewritten for each input; removed at exit.
class InputFile {
 public:
  explicit InputFile(const std::string& target);
  ~InputFile();
  const std::string& write(const uint8_t* data, size_t size);  // the path

 private:
  std::string path_;
};

}  // namespace ltx::fuzz
