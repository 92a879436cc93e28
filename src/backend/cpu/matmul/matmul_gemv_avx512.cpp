// The matrix-vector path: out[M, N] = a[M, K]·W[N, K]ᵀ for a few rows of a against weights in the Linear layout:
// f32 rows against bf16 W (the DiT's AdaLN and timestep MLPs: one row per batch item against up to 36864×4096
// weights), and bf16 rows against bf16 or encoded W (a language model's decode step: one token against every layer
// and the vocabulary head). The blocked path would widen or decode all of W into panels on every call, and the panel
// path spends 31 of its 32 lanes on absent rows; here W is read once, in place (encoded rows decoded one KC slice at
// a time into bf16 lines, as the blocked path's packer decodes them): 16 rows × 32 k go through one register
// transpose, so each vector holds one k (f32) or one k pair (bf16) for 16 outputs, and every row of a adds its
// products with the blocked kernel's instruction in its order (per KC slice, k ascending from zero, the slice's sum
// then added to the running output), so the bits equal the blocked path's.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "backend/cpu/matmul/dequant_avx512.h"
#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu::gemm {
namespace {

constexpr int64_t kMaxRows = 4;  // rows of a per call (accumulators: one vector per row)

// Row n of W: whole encoded rows, or a plain row's first element.
const std::byte* w_row(const OperandB& b, int64_t n) {
  return b.data +
         n * (dtype_is_quantized(b.dtype) ? b.row_bytes : b.sn * static_cast<int64_t>(dtype_block_bytes(b.dtype)));
}

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

// bf16 rows of a against bf16 or encoded W, outputs n0 .. n0 + cols (cols <= 16): per KC slice, 16 rows × 32 k (the
// encoded ones decoded to bf16 lines first) transposed into bf16 pairs, acc = vdpbf16ps(acc, a pair, W pair) pair
// after pair as the blocked bf16 kernel sums; f32 sums stored as out's dtype (f32 or bf16).
template <bool Native>
void block_bf16(const Problem& p, int64_t n0, int cols, int64_t kc_step) {
  const auto* a = reinterpret_cast<const uint16_t*>(p.a.data);
  // Encoded rows are decoded whole, once (the values a per-slice decode gives: blocks decode independently).
  thread_local std::vector<uint16_t> decoded;
  const bool encoded = dtype_is_quantized(p.b.dtype);
  const uint16_t* w[16];
  if (encoded) {
    if (decoded.size() < static_cast<size_t>(16 * p.k)) decoded.resize(static_cast<size_t>(16 * p.k));
    for (int j = 0; j < cols; ++j) {
      if (j + 1 < cols) prefetch_bytes(w_row(p.b, n0 + j + 1), p.b.row_bytes);
      decode_row_bf16(p.b.dtype, w_row(p.b, n0 + j), p.k, decoded.data() + j * p.k);
      w[j] = decoded.data() + j * p.k;
    }
  } else {
    for (int j = 0; j < cols; ++j) w[j] = reinterpret_cast<const uint16_t*>(w_row(p.b, n0 + j));
  }
  const __mmask16 out_mask = lanes(cols);
  __m512 c[kMaxRows];
  for (int64_t pc = 0; pc < p.k; pc += kc_step) {
    const int64_t kc = std::min(kc_step, p.k - pc);
    const uint16_t* rows[16];
    for (int j = 0; j < cols; ++j) rows[j] = w[j] + pc;
    __m512 acc[kMaxRows];
    for (int64_t i = 0; i < p.m; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t k0 = 0; k0 < kc; k0 += 32) {
      const int64_t valid = std::min<int64_t>(32, kc - k0);
      const __mmask32 load_mask = valid >= 32 ? 0xffffffffu : static_cast<__mmask32>((1u << valid) - 1u);
      __m512i r[16];
      for (int j = 0; j < 16; ++j)
        r[j] = j < cols ? _mm512_maskz_loadu_epi16(load_mask, rows[j] + k0) : _mm512_setzero_si512();
      transpose16(reinterpret_cast<__m512*>(r));  // r[t]: the bf16 pairs (k0 + 2t, k0 + 2t + 1) of 16 rows of W
      for (int t = 0; 2 * t < valid; ++t) {
        if constexpr (!Native) {
          // vec::dpbf16's emulation with W's halves widened once for every row of a: odd products first, as it adds.
          const __m512 w_even = _mm512_castsi512_ps(_mm512_slli_epi32(r[t], 16));
          const __m512 w_odd =
              _mm512_castsi512_ps(_mm512_and_si512(r[t], _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
          for (int64_t i = 0; i < p.m; ++i) {
            const uint16_t* ai = a + i * p.a.sm + pc + k0 + 2 * t;
            const float even = bf16_to_f32(ai[0]), odd = 2 * t + 1 < valid ? bf16_to_f32(ai[1]) : 0.0f;
            acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(even), w_even, _mm512_fmadd_ps(_mm512_set1_ps(odd), w_odd, acc[i]));
          }
        } else {
          for (int64_t i = 0; i < p.m; ++i) {
            const uint16_t* ai = a + i * p.a.sm + pc + k0 + 2 * t;
            const uint32_t pair = ai[0] | (2 * t + 1 < valid ? static_cast<uint32_t>(ai[1]) << 16 : 0u);
            acc[i] = vec::dpbf16<true>(acc[i], _mm512_set1_epi32(static_cast<int>(pair)), r[t]);
          }
        }
      }
    }
    for (int64_t i = 0; i < p.m; ++i) c[i] = pc == 0 ? acc[i] : _mm512_add_ps(acc[i], c[i]);
  }
  for (int64_t i = 0; i < p.m; ++i) {
    if (p.out_dtype == DType::F32)
      _mm512_mask_storeu_ps(reinterpret_cast<float*>(p.out) + i * p.ldo + n0, out_mask, c[i]);
    else
      vec::store_bf16(reinterpret_cast<uint16_t*>(p.out) + i * p.ldo + n0, c[i], out_mask);
  }
}

// Outputs n0 .. n0 + cols of every row of a, by the path p's dtypes take.
void block_any(const Problem& p, int64_t n0, int cols, int64_t kc_step) {
  static const bool native = cpu_features().avx512_bf16;
  if (p.compute == Compute::F32)
    block(p, n0, cols, kc_step);
  else
    (native ? block_bf16<true> : block_bf16<false>)(p, n0, cols, kc_step);
}

// With an epilogue: groups of 16 blocks (256 outputs) are computed into an f32 buffer [rows][256], then the epilogue
// stores each row of the group once.
void blocks_epilogue(const Problem& p, int64_t b_begin, int64_t b_end, int64_t kc_step) {
  constexpr int64_t kGroup = 16;
  alignas(64) float buf[kMaxRows * kGroup * 16];
  for (int64_t g = b_begin; g < b_end; g += kGroup) {
    const int64_t n0 = g * 16, width = std::min(std::min(b_end, g + kGroup) * 16, p.n) - n0;
    Problem q = p;  // outputs n0 .. n0 + width of p, stored as f32 in buf
    q.b.data = w_row(p.b, n0);
    q.n = width;
    q.out = reinterpret_cast<std::byte*>(buf);
    q.out_dtype = DType::F32;
    q.ldo = width;
    for (int64_t j = 0; j < width; j += 16)
      block_any(q, j, static_cast<int>(std::min<int64_t>(16, width - j)), kc_step);
    for (int64_t i = 0; i < p.m; ++i) p.epilogue->store(p.epilogue_row0 + i, n0, width, buf + i * width);
  }
}

}  // namespace

bool gemv_applies(const Problem& p) {
  const bool rows = p.m >= 1 && p.m <= kMaxRows && p.k > 0 && p.a.sk == 1;
  const bool f32 = p.compute == Compute::F32 && p.a.dtype == DType::F32 && p.b.dtype == DType::BF16 && p.b.sk == 1 &&
                   p.out_dtype == DType::F32;
  // bf16 rows against bf16 (contiguous rows) or encoded W (whole blocks per KC slice, as the blocked path decodes).
  const bool encoded =
      dtype_is_quantized(p.b.dtype) && kKC_bf16 % static_cast<int64_t>(dtype_block_elems(p.b.dtype)) == 0;
  const bool bf16 = p.compute == Compute::BF16 && p.a.dtype == DType::BF16 &&
                    ((p.b.dtype == DType::BF16 && p.b.sk == 1) || encoded) &&
                    (p.out_dtype == DType::F32 || p.out_dtype == DType::BF16 || p.epilogue != nullptr);
  return rows && (f32 || bf16);
}

void run_gemv(const Problem& p) {
  // The blocked path's KC slices (run_block in matmul_gemm_avx512.cpp): equal slices of at most KC, multiples of 16;
  // encoded weights keep KC, their slices whole blocks.
  const int64_t kc_max = kc_for(p.compute);
  const int64_t slices = (p.k + kc_max - 1) / kc_max;
  const int64_t kc_step =
      dtype_is_quantized(p.b.dtype) ? kc_max : std::min(kc_max, ((p.k + slices - 1) / slices + 15) / 16 * 16);
  const int64_t blocks = (p.n + 15) / 16;
  // Below ~1 MFLOP the pool's wake-up costs more than a second thread saves.
  const bool tiny = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1e6;
  parallel_for(blocks, tiny ? blocks : 8, [&](int64_t begin, int64_t end) {
    if (p.epilogue != nullptr) return blocks_epilogue(p, begin, end, kc_step);
    for (int64_t b = begin; b < end; ++b)
      block_any(p, b * 16, static_cast<int>(std::min<int64_t>(16, p.n - b * 16)), kc_step);
  });
}

}  // namespace ltx::cpu::gemm
