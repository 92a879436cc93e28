// RmsNorm and LayerNorm over the last axis on AVX-512, giving norm_ref.cpp's bits: the reference sums each row
// left to right in f32 (one dependent add per element), so here 16 rows run at once, one per vector lane: a
// 16×16 tile of rows × columns is transposed so that column c of every row is one vector, and each lane adds its
// row's elements in the reference's order. Statistics per row are then the reference's scalar formulas; the
// normalize/affine pass is elementwise with the same separate roundings (vec::mul_rn/add_rn). Rows in parallel.
// The statistics and the plain normalization are also RowNormalizer's vector path (row_norm.h: a fused program led
// by a norm), so both give the same bits.
// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <variant>
#include <vector>

#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/norm/row_norm.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/vec_avx512.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

constexpr int64_t kLanes = 16;

__m512 load_row(const NormRows& rows, int64_t row, int64_t j, __mmask16 m) {
  const int64_t at = rows.offsets[static_cast<size_t>(row)] + j;
  return rows.dtype == DType::BF16 ? vec::load_bf16(reinterpret_cast<const uint16_t*>(rows.x) + at, m)
                                   : vec::load_f32(reinterpret_cast<const float*>(rows.x) + at, m);
}

// Per lane (row r0 + lane): the left-to-right f32 sum over the row of x (center empty) or of (x − center)².
__m512 row_sums(const NormRows& rows, int64_t r0, int64_t count, const __m512* center) {
  __m512 acc = _mm512_setzero_ps();
  __m512 t[kLanes];
  for (int64_t j0 = 0; j0 < rows.n; j0 += kLanes) {
    const int64_t cols = std::min(kLanes, rows.n - j0);
    const __mmask16 m = vec::tail_mask(cols);
    for (int64_t i = 0; i < kLanes; ++i) t[i] = load_row(rows, r0 + std::min(i, count - 1), j0, m);
    gemm::transpose16(t);
    for (int64_t c = 0; c < cols; ++c) {
      if (center == nullptr) {
        acc = vec::add_rn(acc, t[c]);
      } else {
        const __m512 d = vec::sub_rn(t[c], *center);
        acc = vec::add_rn(acc, vec::mul_rn(d, d));
      }
    }
  }
  return acc;
}

struct Affine {
  const float* weight = nullptr;
  const float* bias = nullptr;
  bool one_plus = false;
};

// dst row (f32 or bf16, row·n elements in) = affine((x − mean)·rstd), as norm_ref.cpp's Affine::apply.
void normalize_row(const NormRows& rows, int64_t row, float mean, float rstd, const Affine& a, std::byte* dst,
                   DType dst_dtype) {
  const __m512 vm = _mm512_set1_ps(mean), vr = _mm512_set1_ps(rstd), one = _mm512_set1_ps(1.0f);
  for (int64_t j = 0; j < rows.n; j += kLanes) {
    const __mmask16 m = vec::tail_mask(rows.n - j);
    __m512 y = vec::mul_rn(vec::sub_rn(load_row(rows, row, j, m), vm), vr);
    if (a.weight != nullptr) {
      __m512 w = vec::load_f32(a.weight + j, m);
      if (a.one_plus) w = vec::add_rn(one, w);
      y = vec::mul_rn(y, w);
    }
    if (a.bias != nullptr) y = vec::add_rn(y, vec::load_f32(a.bias + j, m));
    if (dst_dtype == DType::BF16)
      vec::store_bf16(reinterpret_cast<uint16_t*>(dst) + j, y, m);
    else
      vec::store_f32(reinterpret_cast<float*>(dst) + j, y, m);
  }
}

bool plain_f32_vector(const Tensor& t, int64_t n) {
  return t.dtype() == DType::F32 && t.rank() == 1 && t.dim(0) == n && (n == 1 || t.strides()[0] == 1);
}

}  // namespace

bool try_norm(OpKind kind, const NormAttrs& attrs, Inputs in, const Tensor& out) {
  if ((kind != OpKind::RmsNorm && kind != OpKind::LayerNorm) || !gemm::avx512_available()) return false;
  const Tensor& x = in[0];
  const auto ok_dtype = [](DType d) { return d == DType::F32 || d == DType::BF16; };
  if (!ok_dtype(x.dtype()) || !ok_dtype(out.dtype()) || !out.is_contiguous() || x.rank() < 1) return false;
  const int64_t n = x.dim(-1);
  if (n == 0 || x.numel() == 0) return x.numel() == 0;
  if (n > 1 && x.strides()[x.rank() - 1] != 1) return false;
  Affine affine;
  size_t next = 1;
  if (attrs.weight != NormWeight::None) {
    if (!plain_f32_vector(in[next], n)) return false;
    affine.weight = in[next++].data<float>();
    affine.one_plus = attrs.weight == NormWeight::OnePlus;
  }
  if (attrs.bias) {
    if (!plain_f32_vector(in[next], n)) return false;
    affine.bias = in[next].data<float>();
  }

  const NormRows rows(x);
  const int64_t count = static_cast<int64_t>(rows.offsets.size());
  const bool layer = kind == OpKind::LayerNorm;
  const int64_t groups = (count + kLanes - 1) / kLanes;
  const auto out_es = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  parallel_for(groups, 1, [&](int64_t g0, int64_t g1) {
    float means[kLanes], rstds[kLanes];
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t r0 = g * kLanes, live = std::min(kLanes, count - r0);
      norm_statistics_avx512(rows, layer, attrs.eps, r0, live, means, rstds);
      for (int64_t i = 0; i < live; ++i)
        normalize_row(rows, r0 + i, means[i], rstds[i], affine, out.raw() + (r0 + i) * n * out_es, out.dtype());
    }
  });
  return true;
}

void norm_statistics_avx512(const NormRows& rows, bool layer, float eps, int64_t r0, int64_t count, float* mean,
                            float* rstd) {
  alignas(64) float sums[kLanes], means[kLanes] = {};
  const auto n = static_cast<float>(rows.n);
  __m512 center = _mm512_setzero_ps();
  if (layer) {  // mean_of: sum / n
    _mm512_store_ps(sums, row_sums(rows, r0, count, nullptr));
    for (int64_t i = 0; i < count; ++i) means[i] = sums[i] / n;
    center = _mm512_load_ps(means);
  }
  // mean_square_of(row, center): for RmsNorm center 0, and (x − 0)² = x² exactly.
  _mm512_store_ps(sums, row_sums(rows, r0, count, &center));
  for (int64_t i = 0; i < count; ++i) {
    mean[i] = means[i];
    rstd[i] = 1.0f / std::sqrt(sums[i] / n + eps);
  }
}

void normalize_row_avx512(const NormRows& rows, int64_t row, float mean, float rstd, float* dst) {
  normalize_row(rows, row, mean, rstd, Affine{}, reinterpret_cast<std::byte*>(dst), DType::F32);
}

}  // namespace ltx::cpu::opt
