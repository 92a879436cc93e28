// 8-bit floats as PyTorch defines them (torch.float8_e4m3fn, torch.float8_e5m2; the OCP FP8 formats): decoding
// to f32, exact. E4M3FN: bias 7, no infinities, S.1111.111 is NaN, max 448. E5M2: bias 15, IEEE-style infinities
// and NaNs, the upper byte of an f16.
#pragma once

#include <cstdint>

namespace ltx {

float f8_e4m3_to_f32(uint8_t v);
float f8_e5m2_to_f32(uint8_t v);

// Decodes n bytes of one format into dst.
void dequantize_f8_e4m3(const uint8_t* src, float* dst, int64_t n);
void dequantize_f8_e5m2(const uint8_t* src, float* dst, int64_t n);

}  // namespace ltx
