// Transpositions between channels-first planes and channels-last rows for the convolution's slabs
// (conv_layout_avx512.cpp; callers check gemm::avx512_available()). dst[c·ldd + r] = src[r·lds + c] for r < rows,
// c < cols, split over the thread pool.
#pragma once

#include <cstdint>

namespace ltx::cpu::opt {

void transpose_f32(const float* src, int64_t lds, int64_t rows, int64_t cols, float* dst, int64_t ldd);
// The same, each value rounded to bf16 (nearest even).
void transpose_f32_to_bf16(const float* src, int64_t lds, int64_t rows, int64_t cols, uint16_t* dst, int64_t ldd);

}  // namespace ltx::cpu::opt
