// Packing for the AVX-512 GEMM: copies (and converts, or dequantizes) a KC-deep slice of a and b into the strip
// layouts the microkernels read (matmul_avx512.h). Packing converts every element exactly once per slice, so
// the microkernel sees only f32 or bf16 pairs whatever the source dtype and strides were.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/matmul/dequant_avx512.h"
#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/vec_avx512.h"
#include "core/half.h"

// GCC 12 warns inside the masked-load and permute intrinsics, whose pass-through operands are deliberately
// undefined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ltx::cpu::gemm {
namespace {

float load_f32(const std::byte* base, DType dt, int64_t index) {
  switch (dt) {
    case DType::F32:
      return reinterpret_cast<const float*>(base)[index];
    case DType::BF16:
      return bf16_to_f32(reinterpret_cast<const uint16_t*>(base)[index]);
    default:
      return f16_to_f32(reinterpret_cast<const uint16_t*>(base)[index]);
  }
}

// n values at src[i·stride] (f32, bf16 or f16) -> f32.
void to_f32(const std::byte* src, DType dt, int64_t stride, int64_t n, float* dst) {
  int64_t i = 0;
  if (stride == 1) {
    if (dt == DType::F32) {
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    }
    const auto* s = reinterpret_cast<const uint16_t*>(src);
    for (; i + 16 <= n; i += 16) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
      const __m512 v =
          dt == DType::BF16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
      _mm512_storeu_ps(dst + i, v);
    }
  }
  for (; i < n; ++i) dst[i] = load_f32(src, dt, i * stride);
}

// n values at src[i·stride] -> bf16, rounding to nearest even (f32_to_bf16).
void to_bf16(const std::byte* src, DType dt, int64_t stride, int64_t n, uint16_t* dst) {
  int64_t i = 0;
  if (stride == 1) {
    if (dt == DType::BF16) {
      std::memcpy(dst, src, static_cast<size_t>(n) * 2);
      return;
    }
    if (dt == DType::F32) {
      const auto* s = reinterpret_cast<const float*>(src);
      for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), vec::to_bf16_rne(_mm512_loadu_ps(s + i)));
    }
  }
  if (dt == DType::BF16) {
    for (; i < n; ++i) dst[i] = reinterpret_cast<const uint16_t*>(src)[i * stride];
    return;
  }
  for (; i < n; ++i) dst[i] = f32_to_bf16(load_f32(src, dt, i * stride));
}

int64_t elem_bytes(DType dt) { return static_cast<int64_t>(dtype_block_bytes(dt)); }

__mmask16 mask16(int64_t n) { return n >= 16 ? 0xffff : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u); }
__mmask32 mask32(int64_t n) { return n >= 32 ? 0xffffffffu : n <= 0 ? 0 : static_cast<__mmask32>((1u << n) - 1u); }

// Elements k .. k + 15 of a contiguous row as f32 (the first n valid, the rest zero).
__m512 load16_f32(const std::byte* row, DType dt, int64_t k, int64_t n) {
  if (dt == DType::F32) return _mm512_maskz_loadu_ps(mask16(n), reinterpret_cast<const float*>(row) + k);
  const __m256i h = _mm256_maskz_loadu_epi16(mask16(n), reinterpret_cast<const uint16_t*>(row) + k);
  if (dt == DType::BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

// Elements k .. k + 31 of a contiguous bf16 or f32 row as 16 bf16 pairs (the first n valid, the rest zero);
// f32 rounds to nearest even as to_bf16 does.
__m512 load16_pairs(const std::byte* row, DType dt, int64_t k, int64_t n) {
  if (dt == DType::BF16)
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(mask32(n), reinterpret_cast<const uint16_t*>(row) + k));
  const auto* f = reinterpret_cast<const float*>(row) + k;
  const __m512 lo = _mm512_maskz_loadu_ps(mask16(n), f), hi = _mm512_maskz_loadu_ps(mask16(n - 16), f + 16);
  return _mm512_castsi512_ps(vec::to_bf16_rne(hi, lo));
}

// Packs an n-major source (column j of the strip is a contiguous row, rows[j], or zero where j >= cols) into a
// strip of `units` rows of NR 32-bit values: f32 values (pairs = false) or bf16 pairs of consecutive k
// (pairs = true). Sixteen columns by sixteen units go through one register transpose.
void pack_rows_transposed(const std::byte* const rows[kNR], DType dt, int cols, int64_t kc, bool pairs, float* d) {
  const int64_t per_unit = pairs ? 2 : 1, units = (kc + per_unit - 1) / per_unit;
  for (int j0 = 0; j0 < kNR; j0 += 16) {
    for (int64_t u0 = 0; u0 < units; u0 += 16) {
      __m512 r[16];
      const int64_t k = u0 * per_unit, valid = kc - k;
      for (int j = 0; j < 16; ++j) {
        if (j0 + j >= cols)
          r[j] = _mm512_setzero_ps();
        else
          r[j] = pairs ? load16_pairs(rows[j0 + j], dt, k, valid) : load16_f32(rows[j0 + j], dt, k, valid);
      }
      transpose16(r);
      const int64_t n_out = std::min<int64_t>(16, units - u0);
      for (int64_t t = 0; t < n_out; ++t) _mm512_store_ps(d + (u0 + t) * kNR + j0, r[t]);
    }
  }
}

// The rows of an n-major strip: columns n0 .. n0 + cols of b over [k0, k0 + kc) as contiguous rows, in place for
// plain b, decoded for encoded b into `lines` ([cols][KC]): f32, or bf16 when the strip is bf16 pairs (rounded as
// the pairs would round the f32 values, so packing them is a plain copy). Returns the rows' dtype. next_cols: the
// width of the strip packed next (columns n0 + NR ..), 0 if none, whose rows' slices are fetched meanwhile.
DType n_major_rows(const OperandB& b, int64_t k0, int64_t kc, int64_t n0, int cols, int next_cols, bool bf16_lines,
                   std::byte* lines, const std::byte* rows[kNR]) {
  for (int j = 0; j < kNR; ++j) rows[j] = nullptr;
  if (!dtype_is_quantized(b.dtype)) {
    for (int j = 0; j < cols; ++j) rows[j] = b.data + (k0 + (n0 + j) * b.sn) * elem_bytes(b.dtype);
    return b.dtype;
  }
  const auto block = static_cast<int64_t>(dtype_block_elems(b.dtype));
  const int64_t line_bytes = bf16_lines ? kKC_bf16 * 2 : kKC_f32 * 4;
  const int64_t slice_bytes = kc / block * elem_bytes(b.dtype);  // k0, kc: whole blocks (KC, K are multiples)
  for (int j = 0; j < cols; ++j) {
    const std::byte* src = b.data + (n0 + j) * b.row_bytes + k0 / block * elem_bytes(b.dtype);
    if (j < next_cols) prefetch_bytes(src + kNR * b.row_bytes, slice_bytes);
    std::byte* line = lines + j * line_bytes;
    if (bf16_lines)
      decode_row_bf16(b.dtype, src, kc, reinterpret_cast<uint16_t*>(line));
    else
      decode_row_f32(b.dtype, src, kc, reinterpret_cast<float*>(line));
    rows[j] = line;
  }
  return bf16_lines ? DType::BF16 : DType::F32;
}

bool n_major(const OperandB& b) { return dtype_is_quantized(b.dtype) || b.sk == 1; }

// One f32 strip [kc][NR] of columns n0 .. n0 + cols.
void pack_b_strip_f32(const OperandB& b, int64_t k0, int64_t kc, int64_t n0, int cols, int next_cols, float* d) {
  if (n_major(b)) {  // the Linear layout W [N, K] (f32, bf16 or f16 widened exactly) or quantized rows
    alignas(64) thread_local float lines[kNR * kKC_f32];
    const std::byte* rows[kNR];
    const DType dt = n_major_rows(b, k0, kc, n0, cols, next_cols, false, reinterpret_cast<std::byte*>(lines), rows);
    pack_rows_transposed(rows, dt, cols, kc, false, d);
    return;
  }
  if (cols < kNR) std::memset(d, 0, static_cast<size_t>(kc * kNR) * 4);
  const int64_t es = elem_bytes(b.dtype);
  for (int64_t k = 0; k < kc; ++k)
    to_f32(b.data + ((k0 + k) * b.sk + n0 * b.sn) * es, b.dtype, b.sn, cols, d + k * kNR);
}

// One bf16-pair strip [ceil(kc/2)][NR][2] of columns n0 .. n0 + cols.
void pack_b_strip_bf16(const OperandB& b, int64_t k0, int64_t kc, int64_t n0, int cols, int next_cols, uint16_t* d) {
  const int64_t pairs = (kc + 1) / 2;
  auto* d32 = reinterpret_cast<uint32_t*>(d);
  if (n_major(b) && (b.dtype == DType::BF16 || dtype_is_quantized(b.dtype))) {
    alignas(64) thread_local uint16_t lines[kNR * kKC_bf16];
    const std::byte* rows[kNR];
    const DType dt = n_major_rows(b, k0, kc, n0, cols, next_cols, true, reinterpret_cast<std::byte*>(lines), rows);
    pack_rows_transposed(rows, dt, cols, kc, true, reinterpret_cast<float*>(d));
    return;
  }
  if (cols < kNR || (kc & 1)) std::memset(d, 0, static_cast<size_t>(pairs * kNR) * 4);
  if (b.dtype == DType::BF16 && b.sn == 1) {  // plain [K, N]: interleave rows k and k+1
    const auto* base = reinterpret_cast<const uint16_t*>(b.data) + k0 * b.sk + n0;
    const __mmask16 m0 = mask16(cols), m1 = mask16(cols - 16);
    for (int64_t kp = 0; kp < pairs; ++kp) {
      const uint16_t* r0 = base + 2 * kp * b.sk;
      const bool has_r1 = 2 * kp + 1 < kc;
      for (int h = 0; h < 2; ++h) {
        const __mmask16 m = h == 0 ? m0 : m1;
        const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + 16 * h));
        const __m512i hi =
            has_r1 ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, r0 + b.sk + 16 * h)) : _mm512_setzero_si512();
        _mm512_store_si512(d32 + kp * kNR + 16 * h, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
      }
    }
    return;
  }
  const int64_t es = elem_bytes(b.dtype);
  alignas(64) uint16_t row[kNR];
  for (int64_t k = 0; k < kc; ++k) {
    to_bf16(b.data + ((k0 + k) * b.sk + n0 * b.sn) * es, b.dtype, b.sn, cols, row);
    for (int j = 0; j < cols; ++j) d[(k / 2) * 2 * kNR + 2 * j + (k & 1)] = row[j];
  }
}

}  // namespace

void pack_a(const Problem& p, int64_t m0, int64_t rows, int64_t k0, int64_t kc, std::byte* dst) {
  const int64_t es = elem_bytes(p.a.dtype);
  const int64_t row_elems = kc_for(p.compute);  // packed row stride
  for (int64_t i = 0; i < rows; ++i) {
    const std::byte* src = p.a.data + ((m0 + i) * p.a.sm + k0 * p.a.sk) * es;
    if (p.compute == Compute::F32) {
      to_f32(src, p.a.dtype, p.a.sk, kc, reinterpret_cast<float*>(dst) + i * row_elems);
    } else {
      uint16_t* d = reinterpret_cast<uint16_t*>(dst) + i * row_elems;
      to_bf16(src, p.a.dtype, p.a.sk, kc, d);
      if (kc & 1) d[kc] = 0;
    }
  }
}

void pack_b(const Problem& p, int64_t k0, int64_t kc, int64_t n0, int64_t cols, std::byte* dst) {
  const int64_t strip = b_strip_bytes(p.compute);
  for (int64_t s = 0; s * kNR < cols; ++s) {
    const int w = static_cast<int>(std::min<int64_t>(kNR, cols - s * kNR));
    const int next = static_cast<int>(std::clamp<int64_t>(cols - (s + 1) * kNR, 0, kNR));
    std::byte* d = dst + s * strip;
    if (p.compute == Compute::F32)
      pack_b_strip_f32(p.b, k0, kc, n0 + s * kNR, w, next, reinterpret_cast<float*>(d));
    else
      pack_b_strip_bf16(p.b, k0, kc, n0 + s * kNR, w, next, reinterpret_cast<uint16_t*>(d));
  }
}

}  // namespace ltx::cpu::gemm
