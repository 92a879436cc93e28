#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "core/tensor.h"
#include "models/gemma3/weights.h"

namespace ltx::gemma3 {
namespace {

std::vector<char> read_bytes(const std::string& name) {
  std::ifstream in(std::string(LTX_SOURCE_DIR) + "/tests/data/quant/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Q5_0 blocks re-encoded as Q8_0 dequantize to exactly gguf-py's Q5_0 dequantization (tests/data/quant, made by
// tools/reference/make_quant_goldens.py).
TEST(Gemma3Gguf, Q5_0ReencodedAsQ8_0IsExact) {
  const std::vector<char> blocks = read_bytes("dequant_q5_0.blocks"), expected = read_bytes("dequant_q5_0.f32");
  ASSERT_FALSE(blocks.empty());
  ASSERT_EQ(blocks.size() % 22, 0u);
  const int64_t n_blocks = static_cast<int64_t>(blocks.size() / 22);
  ASSERT_EQ(expected.size(), static_cast<size_t>(n_blocks * 32 * 4));
  Tensor q8 = Tensor::empty(DType::Q8_0, {n_blocks, 32});
  q5_0_to_q8_0(reinterpret_cast<const std::byte*>(blocks.data()), q8.raw(), n_blocks);
  const std::vector<float> got = q8.to_floats();
  std::vector<float> want(got.size());
  std::memcpy(want.data(), expected.data(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
}

}  // namespace
}  // namespace ltx::gemma3
