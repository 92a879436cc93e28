// The matrix-vector path: out[M, N] = a[M, K]·W[N, K]ᵀ for a few f32 rows of a against bf16 weights in the Linear
// layout (the DiT's AdaLN and timestep MLPs: one row per batch item against up to 36864×4096 weights). The blocked
// path would widen all of W into f32 panels on every call (4 bytes written per weight for 2 flops per row of a);
// here W is read once, in place: 16 rows × 32 k go through one register transpose of bf16 pairs, so each vector
// holds one k for 16 outputs, and every row of a adds its products with the blocked kernel's f32 FMA in its order (per
// KC slice, k ascending from zero, the slice's sum then added to the running output), so the bits equal the blocked
// path's.
#include <immintrin.h>

#include <algorithm>

#include "backend/cpu/matmul/matmul_avx512.h"
#include "core/thread_pool.h"

namespace ltx::cpu::gemm {
namespace {

constexpr int64_t kMaxRows = 4;  // rows of a per call (accumulators: one vector per row)

__mmask16 lanes(int64_t n) { return n >= 16 ? 0xffff : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u); }

// Outputs n0 .. n0 + cols (cols <= 16) for every row of a.
void block(const Problem& p, int64_t n0, int cols, int64_t kc_step) {
  const auto* w = reinterpret_cast<const uint16_t*>(p.b.data) + n0 * p.b.sn;
  const auto* a = reinterpret_cast<const float*>(p.a.data);
  auto* out = reinterpret_cast<float*>(p.out);
  const __mmask16 out_mask = lanes(cols);
  __m512 c[kMaxRows];
  for (int64_t pc = 0; pc < p.k; pc += kc_step) {
    const int64_t kc = std::min(kc_step, p.k - pc);
    __m512 acc[kMaxRows];
    for (int64_t i = 0; i < p.m; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t k0 = pc; k0 < pc + kc; k0 += 32) {
      const int64_t valid = std::min<int64_t>(32, pc + kc - k0);
      const __mmask32 load_mask = valid >= 32 ? 0xffffffffu : static_cast<__mmask32>((1u << valid) - 1u);
      __m512i r[16];
      for (int j = 0; j < 16; ++j)
        r[j] = j < cols ? _mm512_maskz_loadu_epi16(load_mask, w + j * p.b.sn + k0) : _mm512_setzero_si512();
      transpose16(reinterpret_cast<__m512*>(r));  // r[t]: the bf16 pairs (k0 + 2t, k0 + 2t + 1) of 16 rows of W
      for (int t = 0; 2 * t < valid; ++t) {
        // bf16 -> f32 exactly: the low half shifted up (k0 + 2t), the high half with the low bits cleared.
        const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(r[t], 16));
        const __m512 odd =
            _mm512_castsi512_ps(_mm512_and_si512(r[t], _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
        const bool has_odd = 2 * t + 1 < valid;
        for (int64_t i = 0; i < p.m; ++i) {
          const float* ai = a + i * p.a.sm + k0 + 2 * t;
          acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ai[0]), even, acc[i]);
          if (has_odd) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(ai[1]), odd, acc[i]);
        }
      }
    }
    for (int64_t i = 0; i < p.m; ++i) c[i] = pc == 0 ? acc[i] : _mm512_add_ps(acc[i], c[i]);
  }
  for (int64_t i = 0; i < p.m; ++i) _mm512_mask_storeu_ps(out + i * p.ldo + n0, out_mask, c[i]);
}

// With an epilogue: groups of 16 blocks (256 outputs) are computed into an f32 buffer [rows][256], then the epilogue
// stores each row of the group once.
void blocks_epilogue(const Problem& p, int64_t b_begin, int64_t b_end, int64_t kc_step) {
  constexpr int64_t kGroup = 16;
  alignas(64) float buf[kMaxRows * kGroup * 16];
  for (int64_t g = b_begin; g < b_end; g += kGroup) {
    const int64_t n0 = g * 16, width = std::min(std::min(b_end, g + kGroup) * 16, p.n) - n0;
    Problem q = p;  // outputs n0 .. n0 + width of p, stored as f32 in buf
    q.b.data = p.b.data + n0 * p.b.sn * 2;
    q.n = width;
    q.out = reinterpret_cast<std::byte*>(buf);
    q.ldo = width;
    for (int64_t j = 0; j < width; j += 16) block(q, j, static_cast<int>(std::min<int64_t>(16, width - j)), kc_step);
    for (int64_t i = 0; i < p.m; ++i) p.epilogue->store(p.epilogue_row0 + i, n0, width, buf + i * width);
  }
}

}  // namespace

bool gemv_applies(const Problem& p) {
  return p.compute == Compute::F32 && p.a.dtype == DType::F32 && p.a.sk == 1 && p.b.dtype == DType::BF16 &&
         p.b.sk == 1 && p.out_dtype == DType::F32 && p.m >= 1 && p.m <= kMaxRows && p.k > 0;
}

void run_gemv(const Problem& p) {
  // The blocked path's KC slices (run_block in matmul_gemm_avx512.cpp): equal slices of at most KC, multiples of 16.
  const int64_t kc_max = kc_for(Compute::F32);
  const int64_t slices = (p.k + kc_max - 1) / kc_max;
  const int64_t kc_step = std::min(kc_max, ((p.k + slices - 1) / slices + 15) / 16 * 16);
  const int64_t blocks = (p.n + 15) / 16;
  // Below ~1 MFLOP the pool's wake-up costs more than a second thread saves.
  const bool tiny = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1e6;
  parallel_for(blocks, tiny ? blocks : 8, [&](int64_t begin, int64_t end) {
    if (p.epilogue != nullptr) return blocks_epilogue(p, begin, end, kc_step);
    for (int64_t b = begin; b < end; ++b)
      block(p, b * 16, static_cast<int>(std::min<int64_t>(16, p.n - b * 16)), kc_step);
  });
}

}  // namespace ltx::cpu::gemm
