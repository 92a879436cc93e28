// Channels-first <-> channels-last transpositions for the convolution's slabs (conv_opt.cpp), 16x16 f32 tiles in
// AVX-512 registers: the slab input converted to bf16 on the way (vcvtneps2bf16, round to nearest even as
// oneDNN's reorder did), the slab output back to f32 planes. Tails (fewer than 16 rows or columns) element by
// element, with the same rounding.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "backend/cpu/conv/conv_layout.h"
#include "backend/cpu/vec_avx512.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

// r[i] <- column i of the 16x16 tile held in r (rows in, rows out).
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 8; ++i) {
    const int a = (i / 4) * 8 + i % 4;  // rows 0-3 with 4-7, 8-11 with 12-15
    t[a] = _mm512_shuffle_f32x4(r[a], r[a + 4], 0x88);
    t[a + 4] = _mm512_shuffle_f32x4(r[a], r[a + 4], 0xDD);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
  }
}

template <bool kToBf16>
void transpose_block(const float* src, int64_t lds, int64_t rows, int64_t c0, int64_t c1, void* dst_v, int64_t ldd) {
  // dst[c * ldd + r] = src[r * lds + c] for r < rows, c in [c0, c1)
  int64_t r0 = 0;
  for (; r0 + 16 <= rows; r0 += 16) {
    int64_t c = c0;
    for (; c + 16 <= c1; c += 16) {
      __m512 t[16];
      for (int i = 0; i < 16; ++i) t[i] = _mm512_loadu_ps(src + (r0 + i) * lds + c);
      transpose16(t);  // t[j] = column c + j over rows r0..r0+15
      for (int j = 0; j < 16; ++j) {
        if constexpr (kToBf16) {
          auto* d = static_cast<uint16_t*>(dst_v) + (c + j) * ldd + r0;
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), vec::to_bf16_rne(t[j]));
        } else {
          _mm512_storeu_ps(static_cast<float*>(dst_v) + (c + j) * ldd + r0, t[j]);
        }
      }
    }
    for (; c < c1; ++c)
      for (int64_t r = r0; r < r0 + 16; ++r) {
        if constexpr (kToBf16)
          static_cast<uint16_t*>(dst_v)[c * ldd + r] = f32_to_bf16(src[r * lds + c]);
        else
          static_cast<float*>(dst_v)[c * ldd + r] = src[r * lds + c];
      }
  }
  for (int64_t r = r0; r < rows; ++r)
    for (int64_t c = c0; c < c1; ++c) {
      if constexpr (kToBf16)
        static_cast<uint16_t*>(dst_v)[c * ldd + r] = f32_to_bf16(src[r * lds + c]);
      else
        static_cast<float*>(dst_v)[c * ldd + r] = src[r * lds + c];
    }
}

template <bool kToBf16>
void transpose_parallel(const float* src, int64_t lds, int64_t rows, int64_t cols, void* dst, int64_t ldd) {
  // Split the columns (the destination's rows) over threads in multiples of 16.
  const int64_t col_blocks = (cols + 15) / 16;
  parallel_for(col_blocks, 1, [&](int64_t begin, int64_t end) {
    transpose_block<kToBf16>(src, lds, rows, begin * 16, std::min(cols, end * 16), dst, ldd);
  });
}

}  // namespace

void transpose_f32(const float* src, int64_t lds, int64_t rows, int64_t cols, float* dst, int64_t ldd) {
  transpose_parallel<false>(src, lds, rows, cols, dst, ldd);
}

void transpose_f32_to_bf16(const float* src, int64_t lds, int64_t rows, int64_t cols, uint16_t* dst, int64_t ldd) {
  transpose_parallel<true>(src, lds, rows, cols, dst, ldd);
}

}  // namespace ltx::cpu::opt
