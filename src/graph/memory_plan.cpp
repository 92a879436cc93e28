#include "graph/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace ltx {

MemoryLayout plan_memory(const std::vector<BufferLifetime>& buffers) {
  const auto align = [](size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; };
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });

  MemoryLayout layout;
  layout.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;  // buffer indices already given an offset
  for (size_t i : order) {
    const BufferLifetime& b = buffers[i];
    const size_t size = align(std::max<size_t>(b.bytes, 1));
    // Occupied ranges of placed buffers whose lifetimes overlap this one, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed) {
      const BufferLifetime& o = buffers[j];
      if (o.last < b.first || b.last < o.first) continue;
      busy.emplace_back(layout.offsets[j], layout.offsets[j] + align(std::max<size_t>(o.bytes, 1)));
    }
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds it; else after the last busy range.
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const auto& [lo, hi] : busy) {
      if (lo > cursor && lo - cursor >= size && lo - cursor < best_gap) {
        best = cursor;
        best_gap = lo - cursor;
      }
      cursor = std::max(cursor, hi);
    }
    if (best == SIZE_MAX) best = cursor;
    layout.offsets[i] = best;
    layout.total = std::max(layout.total, best + size);
    placed.push_back(i);
  }
  return layout;
}

}  // namespace ltx
