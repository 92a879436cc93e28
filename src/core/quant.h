// GGUF block-quantized formats: dequantize to f32 and quantize from f32 (ggml's layouts and formulas).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace ltx {

// Dequantizes n elements (a whole number of blocks) of type t from src into dst.
void dequantize_row(DType t, const void* src, float* dst, int64_t n);
// Quantizes n elements into blocks of type t, as ggml's reference quantizers do. Used to make test weights.
void quantize_row(DType t, const float* src, void* dst, int64_t n);

}  // namespace ltx
