// Internals shared by the int8-activation path's two files: the blocked GEMM (matmul_int8_avx512.cpp) and the few-rows
// path (matmul_int8_rows_avx512.cpp). Include only from files compiled for AVX-512 with VNNI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "core/half.h"

namespace ltx::cpu::gemm::int8 {

inline constexpr int64_t kBlock = 32;  // k per quantization block, of a and of W

inline int64_t aligned64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// The zero point z of a *_0 format (o = z·s), or 0 for the K-quants, whose o is a separate per-block term.
inline int zero_point(DType t) { return t == DType::Q8_0 ? 128 : t == DType::Q4_0 ? 8 : t == DType::Q5_0 ? 16 : 0; }

inline float f16_scale(const uint8_t* p) {  // a block's f16 scale
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// `rows` rows of a, elements [k0, k0 + kc), quantized per block of 32: q [rows][kc], and per (row, block) d, the
// integer start -z·Σq (the *_0 formats' offset term) and d·Σq (the K-quants').
struct QuantizedRows {
  int8_t* q = nullptr;
  float* d = nullptr;
  int32_t* start = nullptr;
  float* d_sum = nullptr;
  int64_t kc = 0;
};

// The bytes carve_quantized_rows lays out (64-byte aligned parts).
int64_t quantized_rows_bytes(int64_t rows, int64_t kc);
QuantizedRows carve_quantized_rows(std::byte* at, int64_t rows, int64_t kc);
// Rows m0 .. m0 + rows of p's a, elements [k0, k0 + kc) (whole blocks, a.sk == 1), with zero point z: d = amax / 127,
// q = nearest-even of x·(1/d); a block holding NaN or Inf gets d = NaN and q = 0.
void quantize_rows(const Problem& p, int64_t m0, int64_t rows, int64_t k0, int64_t kc, int z, const QuantizedRows& out);

// The few-rows path (matmul_int8_rows_avx512.cpp): 1-4 rows of a against Q8_0, Q4_0, Q5_0, Q4_K, Q5_K or Q6_K weights,
// read in place column after column.
bool rows_path_applies(const Problem& p);
void run_rows(const Problem& p);

}  // namespace ltx::cpu::gemm::int8
