// allocate_arena (graph/arena_memory.cpp): small arenas are ordinary allocations, large ones an anonymous mapping;
// both zero-filled, 64-byte aligned, writable over their whole length, and released with their storage.
#include "graph/arena_memory.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace ltx {
namespace {

void expect_zero_aligned_writable(size_t bytes) {
  const std::shared_ptr<Storage> s = allocate_arena(bytes);
  ASSERT_NE(s, nullptr);
  EXPECT_GE(s->bytes(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % 64, 0u);
  size_t nonzero = 0;
  for (size_t i = 0; i < bytes; i += 4093) nonzero += s->data()[i] != std::byte{0};
  nonzero += s->data()[bytes - 1] != std::byte{0};
  EXPECT_EQ(nonzero, 0u) << bytes << " bytes";
  s->data()[0] = std::byte{1};
  s->data()[bytes - 1] = std::byte{2};
  EXPECT_EQ(s->data()[bytes - 1], std::byte{2});
}

TEST(ArenaMemory, SmallAndLargeArenasAreZeroAlignedAndWritable) {
  expect_zero_aligned_writable(1);
  expect_zero_aligned_writable(100000);
  expect_zero_aligned_writable((size_t{8} << 20) - 1);  // the last ordinary allocation
  expect_zero_aligned_writable(size_t{8} << 20);        // the first mapped one
  expect_zero_aligned_writable((size_t{24} << 20) + 12345);
  for (int i = 0; i < 20; ++i) expect_zero_aligned_writable(size_t{16} << 20);  // mapped and released each time
}

}  // namespace
}  // namespace ltx
