#include "models/gemma3/content_hash.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ltx::gemma3 {
namespace {

std::vector<std::byte> bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> b(n);
  for (auto& x : b) x = static_cast<std::byte>(rng() & 0xFF);
  return b;
}

// The value files already on disk were written with (the scalar lanes before the vector path existed): a change
// here would make every existing decoded cache fail its hashes.
TEST(ContentHash, PinnedValue) {
  std::vector<std::byte> b(1000);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((i * 7 + 3) & 0xFF);
  EXPECT_EQ(content_hash_portable(b.data(), b.size()), 0x9312b4a32ad24960ull);
  EXPECT_EQ(content_hash(b.data(), b.size()), 0x9312b4a32ad24960ull);
}

// The dispatched path (AVX-512 where the CPU has it) equals the scalar one at every length and misalignment.
TEST(ContentHash, VectorPathEqualsPortable) {
  const std::vector<std::byte> b = bytes(4096 + 64, 1);
  for (size_t offset = 0; offset < 9; ++offset)
    for (size_t n = 0; n <= 300; ++n)
      ASSERT_EQ(content_hash(b.data() + offset, n), content_hash_portable(b.data() + offset, n)) << offset << " " << n;
  EXPECT_EQ(content_hash(b.data(), 4096), content_hash_portable(b.data(), 4096));
}

// Any one changed byte, in a whole block or in the tail, changes the hash.
TEST(ContentHash, EveryByteCounts) {
  std::vector<std::byte> b = bytes(200, 2);
  const uint64_t h = content_hash(b.data(), b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] ^= std::byte{0x10};
    EXPECT_NE(content_hash(b.data(), b.size()), h) << i;
    b[i] ^= std::byte{0x10};
  }
  EXPECT_NE(content_hash(b.data(), b.size() - 1), h);  // the length counts
}

}  // namespace
}  // namespace ltx::gemma3
