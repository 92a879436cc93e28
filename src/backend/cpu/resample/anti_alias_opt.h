// AntiAliasSnakeBeta on AVX-512 (anti_alias_avx512.cpp): BigVGAN-v2's ×2 up, SnakeBeta, ×2 down in one pass per
// row, and the 16-lane sin/cos (vec_avx512.h) it uses, exposed for tests.
#pragma once

#include <cstdint>

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// False (nothing written) when the call is not f32/bf16 x and out, or the CPU lacks AVX-512.
bool try_anti_alias_snake_beta(const SnakeAttrs& a, Inputs in, const Tensor& out);

// vec::sin / vec::cos over n floats (n any); false when the CPU lacks AVX-512.
bool vec_sin_for_testing(const float* x, float* y, int64_t n);
bool vec_cos_for_testing(const float* x, float* y, int64_t n);

}  // namespace ltx::cpu::opt
