// 8-bit floats as PyTorch defines them (torch.float8_e4m3fn, torch.float8_e5m2; the OCP FP8 formats): decoding
// to f32, exact. E4M3FN: bias 7, no infinities, S.1111.111 is NaN, max 448. E5M2: bias 15, IEEE-style infinities
// and NaNs, the upper byte of an f16.
#pragma once

#include <cstdint>

namespace ltx {

float f8_e4m3_to_f32(uint8_t v);
float f8_e5m2_to_f32(uint8_t v);

// Encodes to E4M3FN, rounding to nearest even; values beyond ±448 (infinities too) saturate to ±448, NaN stays
// NaN. Bit-identical to the pinned torch 2.15's `x.to(torch.float8_e4m3fn)` (checked on every byte's value, its
// neighbours and midpoints, and 600k random values), and so to the clamp-then-cast of ltx-core's fp8 quantizer
// (quantization/fp8_scaled_mm.py, quantize_weight_to_fp8_per_tensor).
uint8_t f32_to_f8_e4m3(float v);
void quantize_f8_e4m3(const float* src, uint8_t* dst, int64_t n);

// Decodes n bytes of one format into dst.
void dequantize_f8_e4m3(const uint8_t* src, float* dst, int64_t n);
void dequantize_f8_e5m2(const uint8_t* src, float* dst, int64_t n);

}  // namespace ltx
