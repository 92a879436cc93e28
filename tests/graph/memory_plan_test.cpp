#include "graph/memory_plan.h"

#include <gtest/gtest.h>

namespace ltx {
namespace {

bool overlaps(size_t a, size_t an, size_t b, size_t bn) { return a < b + bn && b < a + an; }

TEST(MemoryPlan, BuffersAliveTogetherNeverOverlap) {
  // Lifetimes of a small diamond plus a long-lived buffer.
  const std::vector<BufferLifetime> bufs = {{1000, 0, 5}, {640, 1, 2}, {640, 2, 3},
                                            {2000, 3, 4}, {64, 4, 5},  {640, 5, 5}};
  const MemoryLayout m = plan_memory(bufs);
  for (size_t i = 0; i < bufs.size(); ++i)
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      const bool together = !(bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first);
      if (together) EXPECT_FALSE(overlaps(m.offsets[i], bufs[i].bytes, m.offsets[j], bufs[j].bytes)) << i << " " << j;
    }
  for (size_t off : m.offsets) EXPECT_EQ(off % kArenaAlignment, 0u);
}

TEST(MemoryPlan, DisjointLifetimesShareMemory) {
  const MemoryLayout m = plan_memory({{4096, 0, 1}, {4096, 2, 3}, {4096, 4, 5}});
  EXPECT_EQ(m.total, 4096u);
}

}  // namespace
}  // namespace ltx
