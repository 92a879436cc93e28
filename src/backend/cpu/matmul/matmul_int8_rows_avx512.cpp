// The int8-activation path for 1-4 rows of a (matmul_int8.h; a language model's decode step): each weight row, an
// output column, is read once, in place, and its blocks are dotted two at a time with a 64-byte chunk of the quantized
// activations: lanes 0-7 of vpdpbusd's sums are the first block's, lanes 8-15 the second's. The activations' per-block
// d (and, for the *_0 formats, the integer start -z·Σq placed in lanes 0 and 8; for Q6_K, -32 times each lane's four
// activations) are laid out once per call as one vector per block pair. Packing 32-column strips, as the blocked path
// does, would cost more than these rows' products.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/kernel_scratch.h"
#include "backend/cpu/matmul/dequant_avx512.h"
#include "backend/cpu/matmul/matmul_int8.h"
#include "backend/cpu/vec_avx512.h"
#include "core/thread_pool.h"

namespace ltx::cpu::gemm::int8 {
namespace {

constexpr int64_t kMaxRows = 4;

struct PairedRows {  // per row, per pair of blocks: d as [d0 ×8, d1 ×8] and the lanes' integer starts (above)
  const int8_t* q = nullptr;
  int64_t k = 0;
  const __m512* d = nullptr;
  const __m512i* start = nullptr;
  const float* d_sum = nullptr;  // per row, per block: d·Σq
};

bool gemv_format(DType t) {
  return t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q5_0 || t == DType::Q4_K || t == DType::Q5_K ||
         t == DType::Q6_K;
}

// The *_0 formats' blocks as unsigned bytes u (their zero point is in a.start): Q8_0 [f16 d][32 int8] as q + 128;
// Q4_0 [f16 d][16 bytes] and Q5_0 [f16 d][32-bit qh][16 bytes]: element i < 16 the low nibble of byte i, element
// 16 + i the high one, bit i of qh the fifth bit of element i.
template <DType T>
__m256i block_u(const uint8_t* blk) {
  if constexpr (T == DType::Q8_0) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2)), _mm256_set1_epi8(-128));
  } else {
    const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + (T == DType::Q5_0 ? 6 : 2)));
    const __m128i nib = _mm_set1_epi8(0x0F);
    __m256i u = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(qs, nib)),
                                        _mm_and_si128(_mm_srli_epi16(qs, 4), nib), 1);
    if constexpr (T == DType::Q5_0) {
      uint32_t qh;
      std::memcpy(&qh, blk + 2, 4);
      u = _mm256_or_si256(u, _mm256_maskz_mov_epi8(qh, _mm256_set1_epi8(0x10)));
    }
    return u;
  }
}

// A *_0 format, two blocks per step.
template <int R, DType T>
void column_0(const PairedRows& a, const uint8_t* row, float* out) {
  constexpr int64_t kBytes = T == DType::Q8_0 ? 34 : T == DType::Q5_0 ? 22 : 18;
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  const int64_t pairs = a.k / 64;
  for (int64_t pr = 0; pr < pairs; ++pr) {
    const uint8_t* b0 = row + 2 * pr * kBytes;
    const uint8_t* b1 = b0 + kBytes;
    const __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(block_u<T>(b0)), block_u<T>(b1), 1);
    const __m512 s = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(f16_scale(b0)), _mm512_set1_ps(f16_scale(b1)));
    for (int r = 0; r < R; ++r) {
      const __m512i x = _mm512_loadu_si512(a.q + r * a.k + 64 * pr);
      const __m512i dot = _mm512_dpbusd_epi32(a.start[r * pairs + pr], u, x);
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s, a.d[r * pairs + pr]), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

// Q4_K / Q5_K: per super-block of 256, sub-blocks 2g and 2g+1 are the low and high nibbles of the same 32 bytes,
// which makes one 64-byte vector of u against the activations' elements 64g .. 64g + 63.
template <int R, bool Q5>
void column_qk(const PairedRows& a, const uint8_t* row, float* out) {
  __m512 acc[R];
  __m256 offset[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm512_setzero_ps();
    offset[r] = _mm256_setzero_ps();
  }
  const int64_t pairs = a.k / 64, bytes = Q5 ? 176 : 144;
  for (int64_t sb = 0; sb < a.k / 256; ++sb) {
    const uint8_t* blk = row + sb * bytes;
    const SubScales sc = k_sub_scales(blk);
    const uint8_t* qh = blk + 16;
    const uint8_t* qs = Q5 ? qh + 32 : qh;
    const __m256i high = Q5 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)) : __m256i{};
    for (int g = 0; g < 4; ++g) {
      const __m256i bytes32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * g));
      __m256i lo = _mm256_and_si256(bytes32, _mm256_set1_epi8(0x0F));
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes32, 4), _mm256_set1_epi8(0x0F));
      if constexpr (Q5) {
        const __mmask32 f0 = _mm256_test_epi8_mask(high, _mm256_set1_epi8(static_cast<char>(1 << (2 * g))));
        const __mmask32 f1 = _mm256_test_epi8_mask(high, _mm256_set1_epi8(static_cast<char>(1 << (2 * g + 1))));
        lo = _mm256_or_si256(lo, _mm256_maskz_mov_epi8(f0, _mm256_set1_epi8(0x10)));
        hi = _mm256_or_si256(hi, _mm256_maskz_mov_epi8(f1, _mm256_set1_epi8(0x10)));
      }
      const __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      const __m512 s = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(sc.ds[2 * g]), _mm512_set1_ps(sc.ds[2 * g + 1]));
      const int64_t pr = 4 * sb + g;
      for (int r = 0; r < R; ++r) {
        const __m512i x = _mm512_loadu_si512(a.q + r * a.k + 64 * pr);
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, x);
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s, a.d[r * pairs + pr]), acc[r]);
      }
    }
    const __m256 dm = _mm256_load_ps(sc.dm);
    for (int r = 0; r < R; ++r)
      offset[r] = _mm256_fmadd_ps(dm, _mm256_loadu_ps(a.d_sum + r * (a.k / kBlock) + 8 * sb), offset[r]);
  }
  for (int r = 0; r < R; ++r) {
    const __m128 o4 = _mm_add_ps(_mm256_castps256_ps128(offset[r]), _mm256_extractf128_ps(offset[r], 1));
    const __m128 o2 = _mm_add_ps(o4, _mm_movehl_ps(o4, o4));
    out[r] = _mm512_reduce_add_ps(acc[r]) - _mm_cvtss_f32(_mm_add_ss(o2, _mm_movehdup_ps(o2)));
  }
}

// Q6_K: [128 bytes ql][64 bytes qh][16 int8 scales][f16 d] per 256, x = d·sc[e / 16]·(q - 32) with a 6-bit q
// (core/quant.cpp): element e = 128h + 32c + i has the low 4 bits in nibble c / 2 of ql[64h + 32(c % 2) + i] and the
// high 2 bits in bits 2c, 2c + 1 of qh[32h + i]. The -32 is the integer start of each lane (a.start: -32 times the
// sum of the lane's four activations), and a lane's four elements share a 16-element sub-block's scale.
template <int R>
void column_q6_k(const PairedRows& a, const uint8_t* row, float* out) {
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  const int64_t pairs = a.k / 64;
  const __m512i spread = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  for (int64_t sb = 0; sb < a.k / 256; ++sb) {
    const uint8_t* blk = row + sb * 210;
    const float d = f16_scale(blk + 208);
    for (int h = 0; h < 2; ++h) {
      const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * h));
      for (int c = 0; c < 4; c += 2) {  // chunks c and c + 1: 64 elements, sub-blocks 8h + 2c .. + 3
        __m256i u[2];
        for (int t = 0; t < 2; ++t) {
          const int cc = c + t;
          const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 64 * h + 32 * (cc % 2)));
          const __m256i l4 = _mm256_and_si256(cc / 2 ? _mm256_srli_epi16(low, 4) : low, _mm256_set1_epi8(0x0F));
          const __m256i h2 = _mm256_and_si256(_mm256_srli_epi16(high, 2 * cc), _mm256_set1_epi8(0x03));
          u[t] = _mm256_or_si256(l4, _mm256_slli_epi16(h2, 4));
        }
        const __m512i uv = _mm512_inserti64x4(_mm512_castsi256_si512(u[0]), u[1], 1);
        int32_t four;
        std::memcpy(&four, blk + 192 + 8 * h + 2 * c, 4);
        const __m128 sc4 = _mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(four))), _mm_set1_ps(d));
        const __m512 s = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(sc4));
        const int64_t pr = 4 * sb + 2 * h + c / 2;
        for (int r = 0; r < R; ++r) {
          const __m512i x = _mm512_loadu_si512(a.q + r * a.k + 64 * pr);
          const __m512i dot = _mm512_dpbusd_epi32(a.start[r * pairs + pr], uv, x);
          acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s, a.d[r * pairs + pr]), acc[r]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
}

template <int R>
void column(DType t, const PairedRows& a, const uint8_t* row, float* out) {
  if (t == DType::Q6_K) return column_q6_k<R>(a, row, out);
  if (t == DType::Q8_0) return column_0<R, DType::Q8_0>(a, row, out);
  if (t == DType::Q4_0) return column_0<R, DType::Q4_0>(a, row, out);
  if (t == DType::Q5_0) return column_0<R, DType::Q5_0>(a, row, out);
  if (t == DType::Q4_K) return column_qk<R, false>(a, row, out);
  column_qk<R, true>(a, row, out);
}

}  // namespace

bool rows_path_applies(const Problem& p) {
  const bool k_quant = p.b.dtype == DType::Q4_K || p.b.dtype == DType::Q5_K || p.b.dtype == DType::Q6_K;
  return p.m <= kMaxRows && gemv_format(p.b.dtype) && p.k % (k_quant ? 256 : 64) == 0;
}

void run_rows(const Problem& p) {
  const int64_t rows = p.m, blocks = p.k / kBlock, pairs = p.k / 64;
  const int z = zero_point(p.b.dtype);
  // The quantized rows and their paired vectors, made once on this thread and read by every task.
  thread_local GrowOnlyBuffer buffer;
  const int64_t q_bytes = quantized_rows_bytes(rows, p.k);
  std::byte* base = buffer.get(q_bytes + 2 * rows * pairs * 64);
  const QuantizedRows q = carve_quantized_rows(base, rows, p.k);
  quantize_rows(p, 0, rows, 0, p.k, z, q);
  auto* d = reinterpret_cast<__m512*>(base + q_bytes);
  auto* start = reinterpret_cast<__m512i*>(base + q_bytes + rows * pairs * 64);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t pr = 0; pr < pairs; ++pr) {
      const int64_t b = r * blocks + 2 * pr;
      d[r * pairs + pr] = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(q.d[b]), _mm512_set1_ps(q.d[b + 1]));
      if (p.b.dtype == DType::Q6_K) {  // -32 times the sum of each lane's four activations
        const __m512i x = _mm512_loadu_si512(q.q + r * p.k + 64 * pr);
        const __m512i sum4 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), x);
        start[r * pairs + pr] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum4, 5));
      } else {
        start[r * pairs + pr] = _mm512_mask_blend_epi32(0x0100, _mm512_maskz_set1_epi32(0x0001, q.start[b]),
                                                        _mm512_set1_epi32(q.start[b + 1]));
      }
    }
  const PairedRows a{q.q, p.k, d, start, q.d_sum};
  constexpr int64_t kChunk = 256;  // columns per store (or epilogue call)
  const int64_t chunks = (p.n + kChunk - 1) / kChunk;
  const bool tiny = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1e6;
  const int64_t out_es = static_cast<int64_t>(dtype_block_bytes(p.out_dtype));
  parallel_for(chunks, tiny ? chunks : 1, [&](int64_t begin, int64_t end) {
    alignas(64) float sums[kMaxRows][kChunk];
    for (int64_t c = begin; c < end; ++c) {
      const int64_t n0 = c * kChunk, width = std::min(kChunk, p.n - n0);
      for (int64_t j = 0; j < width; ++j) {
        const auto* row = reinterpret_cast<const uint8_t*>(p.b.data + (n0 + j) * p.b.row_bytes);
        if (j + 1 < width) prefetch_bytes(p.b.data + (n0 + j + 1) * p.b.row_bytes, p.b.row_bytes);
        float out[kMaxRows];
        switch (rows) {
          case 1:
            column<1>(p.b.dtype, a, row, out);
            break;
          case 2:
            column<2>(p.b.dtype, a, row, out);
            break;
          case 3:
            column<3>(p.b.dtype, a, row, out);
            break;
          default:
            column<4>(p.b.dtype, a, row, out);
            break;
        }
        for (int64_t r = 0; r < rows; ++r) sums[r][j] = out[r];
      }
      for (int64_t r = 0; r < rows; ++r) {
        if (p.epilogue != nullptr) {
          p.epilogue->store(p.epilogue_row0 + r, n0, width, sums[r]);
        } else if (p.out_dtype == DType::F32) {
          std::memcpy(reinterpret_cast<float*>(p.out) + r * p.ldo + n0, sums[r], static_cast<size_t>(width) * 4);
        } else {
          auto* dst = reinterpret_cast<uint16_t*>(p.out + (r * p.ldo + n0) * out_es);
          for (int64_t j = 0; j < width; j += 16)
            vec::store_bf16(dst + j, _mm512_loadu_ps(sums[r] + j), vec::tail_mask(width - j));
        }
      }
    }
  });
}

}  // namespace ltx::cpu::gemm::int8
