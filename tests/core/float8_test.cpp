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

TEST(Float8, E4M3EncodeInvertsDecode) {
  for (int b = 0; b < 256; ++b) {
    const float v = f8_e4m3_to_f32(static_cast<uint8_t>(b));
    if (std::isnan(v)) continue;
    EXPECT_EQ(f32_to_f8_e4m3(v), b) << "byte " << b << " = " << v;
  }
  EXPECT_EQ(f32_to_f8_e4m3(std::numeric_limits<float>::quiet_NaN()) & 0x7F, 0x7F);
}

TEST(Float8, E4M3EncodeRoundsHalfToEven) {
  // Normals: 1 (0x38) and 1.125 (0x39) have midpoint 1.0625, which goes to the even mantissa 1; 1.1875, between
  // 1.125 and 1.25 (0x3A), goes up to the even 1.25. Just past a midpoint rounds away from the nearer even.
  EXPECT_EQ(f32_to_f8_e4m3(1.0625f), 0x38);
  EXPECT_EQ(f32_to_f8_e4m3(std::nextafter(1.0625f, 2.0f)), 0x39);
  EXPECT_EQ(f32_to_f8_e4m3(1.1875f), 0x3A);
  EXPECT_EQ(f32_to_f8_e4m3(std::nextafter(1.1875f, 0.0f)), 0x39);
  EXPECT_EQ(f32_to_f8_e4m3(-1.0625f), 0xB8);
  // Subnormals (multiples of 2^-9): 1.5 · 2^-9 rounds to 2 · 2^-9, 2.5 · 2^-9 to 2 · 2^-9, 0.5 · 2^-9 to 0.
  EXPECT_EQ(f32_to_f8_e4m3(std::ldexp(1.5f, -9)), 0x02);
  EXPECT_EQ(f32_to_f8_e4m3(std::ldexp(2.5f, -9)), 0x02);
  EXPECT_EQ(f32_to_f8_e4m3(std::ldexp(0.5f, -9)), 0x00);
  EXPECT_EQ(f32_to_f8_e4m3(std::ldexp(7.5f, -9)), 0x08);  // into the smallest normal, 2^-6
  // The top binade, 384 (0x7C), 416 (0x7D), 448 (0x7E): 432 goes up to the even 448, 400 down to the even 384.
  EXPECT_EQ(f32_to_f8_e4m3(432.0f), 0x7E);
  EXPECT_EQ(f32_to_f8_e4m3(400.0f), 0x7C);
}

TEST(Float8, E4M3EncodeSaturates) {
  EXPECT_EQ(f32_to_f8_e4m3(448.0f), 0x7E);
  EXPECT_EQ(f32_to_f8_e4m3(470.0f), 0x7E);  // past the 448/480 midpoint: still 448, as torch 2.15's cast gives
  EXPECT_EQ(f32_to_f8_e4m3(1e30f), 0x7E);
  EXPECT_EQ(f32_to_f8_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
}

}  // namespace
}  // namespace ltx
