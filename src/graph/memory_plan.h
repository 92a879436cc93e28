// Arena layout: buffers with lifetimes [first, last] (step indices) get byte offsets so that buffers alive at the
// same time never overlap. Greedy by size, each placed in the smallest gap that fits (best fit; a simple
// heuristic for static graphs; cf. TFLite's "greedy by size" planner).
#pragma once

#include <cstddef>
#include <vector>

namespace ltx {

struct BufferLifetime {
  size_t bytes = 0;
  int first = 0;  // step that writes it
  int last = 0;   // last step that reads it (inclusive)
};

struct MemoryLayout {
  std::vector<size_t> offsets;  // per buffer
  size_t total = 0;             // arena size
};

inline constexpr size_t kArenaAlignment = 64;

MemoryLayout plan_memory(const std::vector<BufferLifetime>& buffers);

}  // namespace ltx
