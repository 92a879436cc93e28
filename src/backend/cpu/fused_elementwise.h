// AVX-512 pieces of run_fused (fused_elementwise.cpp), in fused_elementwise_avx512.cpp; callers first check
// gemm::avx512_available().
//   Exact ops (add, sub, mul, div, lerp, scale, clamp, leaky_relu) give the reference kernel's bits.
//   silu, sigmoid and gelu_tanh use a polynomial exp (vec_avx512.h) when `approximate` is set: a few f32 ulps
//   (the bound is measured in tests/ops), which run_fused allows only when the result is stored in bf16/f16, so
//   f32 (validation) results keep libm's bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"
#include "ops/fused.h"

namespace ltx::cpu::fused {

// r = op(a, b, c) over n elements; false when this op (or its exact form) has no vector version.
bool eval_avx512(const FusedInstr& ins, const float* a, const float* b, const float* c, float* r, int64_t n,
                 bool approximate);
// n contiguous bf16 values -> f32; f32 -> n contiguous bf16 (round to nearest even, as f32_to_bf16).
void load_bf16_avx512(const uint16_t* src, int64_t n, float* dst);
void store_bf16_avx512(const float* src, int64_t n, uint16_t* dst);

}  // namespace ltx::cpu::fused
