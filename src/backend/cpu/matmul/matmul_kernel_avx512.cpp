// Register-blocked microkernels: an R×32 tile of C (R <= 14) held in 2R zmm accumulators over one KC slice.
// The row count is a template parameter so the accumulators stay in registers; columns past `cols` are masked.
#include <immintrin.h>

#include <array>
#include <utility>

#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"

// GCC 12 warns inside _mm512_cvtps_ph, whose pass-through operand is deliberately undefined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ltx::cpu::gemm {
namespace {

__mmask16 lane_mask(int count) {  // the first `count` lanes of 16 (count clamped to [0, 16])
  if (count <= 0) return 0;
  if (count >= 16) return 0xffff;
  return static_cast<__mmask16>((1u << count) - 1u);
}

void store_row(int i, __m512 v0, __m512 v1, __mmask16 m0, __mmask16 m1, const TileOut& t) {
  float* c = t.c + i * t.ldc;
  if (t.accumulate) {
    v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, c));
    v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, c + 16));
  }
  if (t.out == nullptr) {
    _mm512_mask_storeu_ps(c, m0, v0);
    _mm512_mask_storeu_ps(c + 16, m1, v1);
    return;
  }
  auto* o = reinterpret_cast<uint16_t*>(t.out) + i * t.ldo;
  if (t.out_dtype == DType::BF16) {  // rounded to nearest even, as f32_to_bf16 does
    _mm256_mask_storeu_epi16(o, m0, vec::to_bf16_rne(v0));
    _mm256_mask_storeu_epi16(o + 16, m1, vec::to_bf16_rne(v1));
  } else {  // f16
    _mm256_mask_storeu_epi16(o, m0, _mm512_cvtps_ph(v0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm256_mask_storeu_epi16(o + 16, m1, _mm512_cvtps_ph(v1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

// The tile's C rows are read (accumulate) or written at the end: start fetching them while the k loop runs.
void prefetch_c(int rows, const TileOut& t) {
  if (t.c == nullptr) return;
  for (int i = 0; i < rows; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(t.c + i * t.ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(t.c + i * t.ldc + 16), _MM_HINT_T0);
  }
}

template <int R>
void f32_tile(const float* a, const float* b, int64_t kc, int cols, const TileOut& t) {
  prefetch_c(R, t);
  __m512 c0[R], c1[R];
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b + k * kNR);
    const __m512 b1 = _mm512_load_ps(b + k * kNR + 16);
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * kKC_f32 + k]);
      c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
    }
  }
  const __mmask16 m0 = lane_mask(cols), m1 = lane_mask(cols - 16);
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) store_row(i, c0[i], c1[i], m0, m1, t);
}

template <int R, bool Native>
void bf16_tile(const uint16_t* a, const uint16_t* b, int64_t kc, int cols, const TileOut& t) {
  // a and b are read as 32-bit (k, k+1) pairs; the packers zero-pad an odd tail.
  const auto* a32 = reinterpret_cast<const int32_t*>(a);
  const auto* b32 = reinterpret_cast<const int32_t*>(b);
  constexpr int64_t a_row = kKC_bf16 / 2;
  const int64_t pairs = (kc + 1) / 2;
  prefetch_c(R, t);
  __m512 c0[R], c1[R];
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t kp = 0; kp < pairs; ++kp) {
    const __m512i b0 = _mm512_load_si512(b32 + kp * kNR);
    const __m512i b1 = _mm512_load_si512(b32 + kp * kNR + 16);
#pragma GCC unroll 14
    for (int i = 0; i < R; ++i) {
      const __m512i av = _mm512_set1_epi32(a32[i * a_row + kp]);
      c0[i] = vec::dpbf16<Native>(c0[i], av, b0);
      c1[i] = vec::dpbf16<Native>(c1[i], av, b1);
    }
  }
  const __mmask16 m0 = lane_mask(cols), m1 = lane_mask(cols - 16);
#pragma GCC unroll 14
  for (int i = 0; i < R; ++i) store_row(i, c0[i], c1[i], m0, m1, t);
}

template <typename Fn, size_t... I>
constexpr auto make_table(std::index_sequence<I...>, Fn) {
  return std::array{Fn::template get<static_cast<int>(I) + 1>()...};
}

struct F32Table {
  using Ptr = void (*)(const float*, const float*, int64_t, int, const TileOut&);
  template <int R>
  static constexpr Ptr get() {
    return &f32_tile<R>;
  }
};
template <bool Native>
struct BF16Table {
  using Ptr = void (*)(const uint16_t*, const uint16_t*, int64_t, int, const TileOut&);
  template <int R>
  static constexpr Ptr get() {
    return &bf16_tile<R, Native>;
  }
};

constexpr auto kF32Kernels = make_table(std::make_index_sequence<kMR>{}, F32Table{});
constexpr auto kBF16Kernels = make_table(std::make_index_sequence<kMR>{}, BF16Table<true>{});
constexpr auto kBF16KernelsEmulated = make_table(std::make_index_sequence<kMR>{}, BF16Table<false>{});

}  // namespace

void kernel_f32(int rows, const float* a, const float* b, int64_t kc, int cols, const TileOut& t) {
  kF32Kernels[static_cast<size_t>(rows - 1)](a, b, kc, cols, t);
}

void kernel_bf16(int rows, const uint16_t* a, const uint16_t* b, int64_t kc, int cols, const TileOut& t) {
  static const bool native = cpu_features().avx512_bf16;
  (native ? kBF16Kernels : kBF16KernelsEmulated)[static_cast<size_t>(rows - 1)](a, b, kc, cols, t);
}

}  // namespace ltx::cpu::gemm
