// The matmul's AVX-512 row decoders (backend/cpu/matmul/dequant_avx512.h) against the scalar dequantize_row, bit for
// bit: random block bytes (every f16 scale pattern, NaN and infinity included, plus a set of extreme scales), every
// 8-bit float code, and rows of every length for the 8-bit floats (the masked tail). The bf16 decoder must give what
// vcvtneps2bf16 gives for dequantize_row's f32, which the bf16 packer applied before the decoders existed.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/matmul/dequant_avx512.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "core/dtype.h"
#include "core/half.h"
#include "core/quant.h"

namespace ltx::test {
namespace {

// vcvtneps2bf16: f32_to_bf16 (nearest even, NaN made quiet), except that f32 denormals become a signed zero.
uint16_t vcvtneps2bf16(float f) {
  const auto u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7f800000u) == 0 && (u & 0x007fffffu) != 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);
  return f32_to_bf16(f);
}

std::vector<DType> encoded_types() {
  std::vector<DType> types;
  for (int i = 0; i < kDTypeCount; ++i)
    if (dtype_is_quantized(static_cast<DType>(i))) types.push_back(static_cast<DType>(i));
  return types;
}

// Byte offsets of a block's f16 scales (ggml's block layouts, core/quant.cpp).
std::vector<size_t> scale_offsets(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0:
      return {0};
    case DType::Q4_K:
    case DType::Q5_K:
      return {0, 2};  // d, dmin
    case DType::Q6_K:
      return {208};
    default:
      return {};
  }
}

// Decodes n elements at src both ways and counts elements whose f32 or bf16 bits differ from dequantize_row's, or
// that were written past n.
size_t mismatches(DType t, const uint8_t* src, int64_t n) {
  std::vector<float> expected(static_cast<size_t>(n)), got(static_cast<size_t>(n) + 32, -7.0f);
  std::vector<uint16_t> got_bf16(static_cast<size_t>(n) + 32, 0x7777);
  dequantize_row(t, src, expected.data(), n);
  cpu::gemm::decode_row_f32(t, reinterpret_cast<const std::byte*>(src), n, got.data());
  cpu::gemm::decode_row_bf16(t, reinterpret_cast<const std::byte*>(src), n, got_bf16.data());
  size_t bad = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const bool f32_ok = std::bit_cast<uint32_t>(expected[i]) == std::bit_cast<uint32_t>(got[i]);
    bad += !f32_ok || vcvtneps2bf16(expected[i]) != got_bf16[i];
  }
  for (size_t i = expected.size(); i < got.size(); ++i) bad += got[i] != -7.0f || got_bf16[i] != 0x7777;
  return bad;
}

TEST(MatMulDequant, EveryEncodedTypeHasAVectorDecoder) {
  for (DType t : encoded_types()) EXPECT_TRUE(cpu::gemm::decode_row_vectorized(t)) << dtype_name(t);
}

TEST(MatMulDequant, RandomBlocksDecodeAsDequantizeRow) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16: the decoders are not used";
  // Denormal, largest, infinite, NaN (quiet, signalling, negative) and ordinary f16 scales.
  const uint16_t extreme_scales[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00,
                                     0xfc00, 0x7c01, 0x7dff, 0x7e00, 0xfe01, 0xffff, 0x3c00, 0x2e66};
  std::mt19937 rng(2024);
  for (DType t : encoded_types()) {
    const auto block = static_cast<int64_t>(dtype_block_elems(t));
    const size_t block_bytes = dtype_block_bytes(t);
    const int64_t blocks = block == 1 ? 8192 : 2048;
    std::vector<uint8_t> src(static_cast<size_t>(blocks) * block_bytes);
    for (uint8_t& b : src) b = static_cast<uint8_t>(rng());
    for (int64_t i = 0; i < blocks; ++i)
      for (size_t offset : scale_offsets(t))
        if (rng() % 4 == 0) {
          const uint16_t h = extreme_scales[rng() % std::size(extreme_scales)];
          std::memcpy(&src[static_cast<size_t>(i) * block_bytes + offset], &h, 2);
        }
    if (block == 1)
      for (int v = 0; v < 256; ++v) src[static_cast<size_t>(v)] = static_cast<uint8_t>(v);  // every code
    EXPECT_EQ(mismatches(t, src.data(), blocks * block), 0u) << dtype_name(t);
    // Runs of 1 .. 9 blocks from every block offset of the first 64 (lengths 1 .. 100 for the 8-bit floats).
    size_t bad = 0;
    for (int64_t first = 0; first < 64; ++first) {
      const int64_t count = block == 1 ? 1 + (first * 37) % 100 : block * (1 + first % 9);
      bad += mismatches(t, src.data() + static_cast<size_t>(first) * block_bytes, count);
    }
    EXPECT_EQ(bad, 0u) << dtype_name(t) << " (short runs)";
  }
}

}  // namespace
}  // namespace ltx::test
