// AVX-512 row decoders for the encoded weight types (dtype_is_quantized: the GGUF blocks of core/quant.cpp and the
// 8-bit floats of core/float8.cpp). The matmul's packers and its small-M path decode one weight row's K slice with
// them. They are compiled for AVX-512 with BF16: call them only where avx512_available() (matmul_gemm.h).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace ltx::cpu::gemm {

// True when decode_row_f32 / decode_row_bf16 have a vector decoder for t; other encoded types still decode (through
// the scalar dequantize_row), only slower.
bool decode_row_vectorized(DType t);

// Decodes n elements of one row of encoded type t from src (n a whole number of t's blocks) into dst, bit for bit as
// dequantize_row (core/quant.h) does.
void decode_row_f32(DType t, const std::byte* src, int64_t n, float* dst);

// The same values rounded to bf16 as vcvtneps2bf16 rounds them (nearest even; f32 denormals, below 1.2e-38, become
// zero): the rounding the bf16 packer has always applied to dequantize_row's output.
void decode_row_bf16(DType t, const std::byte* src, int64_t n, uint16_t* dst);

// The eight sub-block scales of a Q4_K / Q5_K super-block b (x = ds[j]·q - dm[j] in sub-block j), unpacked as
// core/quant.cpp's unpack_scales_mins and multiplied by the block's f16 d and dmin.
struct SubScales {
  alignas(32) float ds[8];  // d·sc[j]
  alignas(32) float dm[8];  // dmin·m[j]
};
SubScales k_sub_scales(const uint8_t* b);

// Fetches [p, p + bytes) into L1. Encoded rows are read a few hundred bytes at a time, row after row: too short a run
// for the hardware prefetchers to start on, so the decoding loops fetch the next rows' slices themselves.
inline void prefetch_bytes(const std::byte* p, int64_t bytes) {
  const auto* c = reinterpret_cast<const char*>(p);
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(c + off, _MM_HINT_T0);
  if (bytes > 0) _mm_prefetch(c + bytes - 1, _MM_HINT_T0);
}

}  // namespace ltx::cpu::gemm
