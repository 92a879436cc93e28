// The public GenerateResult::noise_recording (forward-declared in ltx/result.hpp): every noise tensor a run drew, in
// order, as NoiseRecorder made them, written by ltx::save to a file `ltx generate --replay-noise` reads.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ltx {

class NoiseRecording {
 public:
  NoiseRecording(std::vector<std::pair<std::string, Tensor>> entries, uint64_t seed)
      : entries_(std::move(entries)), seed_(seed) {}
  const std::vector<std::pair<std::string, Tensor>>& entries() const { return entries_; }
  // A safetensors file (atomically) with the run's seed in its metadata, as NoiseRecorder::save writes.
  void save(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, Tensor>> entries_;
  uint64_t seed_;
};

}  // namespace ltx
