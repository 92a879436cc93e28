// 8-bit float decoding against values fixed by the formats (torch.float8_e4m3fn / float8_e5m2).
#include "core/float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/dtype.h"
#include "core/quant.h"

namespace ltx {
namespace {

TEST(Float8, E4M3FnValues) {
  EXPECT_EQ(f8_e4m3_to_f32(0x38), 1.0f);                  // exponent 7 = bias
  EXPECT_EQ(f8_e4m3_to_f32(0xB8), -1.0f);                 // sign
  EXPECT_EQ(f8_e4m3_to_f32(0x7E), 448.0f);                // the largest finite value
  EXPECT_EQ(f8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));  // the smallest subnormal: 2^-6 · 1/8
  EXPECT_EQ(f8_e4m3_to_f32(0x08), std::ldexp(1.0f, -6));  // the smallest normal
  EXPECT_EQ(f8_e4m3_to_f32(0x3C), 1.5f);
  EXPECT_TRUE(std::isnan(f8_e4m3_to_f32(0x7F)));
  EXPECT_TRUE(std::isnan(f8_e4m3_to_f32(0xFF)));
  EXPECT_EQ(f8_e4m3_to_f32(0x78), 256.0f);  // no infinities: exponent 15 is a normal binade
}

TEST(Float8, E5M2Values) {
  EXPECT_EQ(f8_e5m2_to_f32(0x3C), 1.0f);
  EXPECT_EQ(f8_e5m2_to_f32(0x7B), 57344.0f);
  EXPECT_EQ(f8_e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f8_e5m2_to_f32(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f8_e5m2_to_f32(0x7D)));
}

TEST(Float8, DecodedLikeTheBlockTypes) {
  // One byte per element, no blocks, handled by dequantize_row (the path the matmul's per-K-slice decode takes).
  for (DType t : {DType::F8_E4M3, DType::F8_E5M2}) {
    EXPECT_TRUE(dtype_is_quantized(t));
    EXPECT_EQ(dtype_block_elems(t), 1u);
    EXPECT_EQ(dtype_bytes_for(t, 7), 7u);
  }
  const uint8_t bytes[3] = {0x38, 0xC0, 0x00};
  float out[3];
  dequantize_row(DType::F8_E4M3, bytes, out, 3);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 0.0f);
}

}  // namespace
}  // namespace ltx
