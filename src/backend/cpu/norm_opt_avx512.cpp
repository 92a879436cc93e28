// RmsNorm and LayerNorm over the last axis on AVX-512, giving norm_ref.cpp's bits: the reference sums each row
// left to right in f32 (one dependent add per element), so here 16 rows run at once, one per vector lane: a
// 16×16 tile of rows × columns is transposed so that column c of every row is one vector, and each lane adds its
// row's elements in the reference's order. Statistics per row are then the reference's scalar formulas; the
// normalize/affine pass is elementwise with the same separate roundings (vec::mul_rn/add_rn). Rows in parallel.
// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cmath>
#include <variant>
#include <vector>

#include "backend/cpu/matmul_avx512.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/vec_avx512.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

constexpr int64_t kLanes = 16;

struct Rows {
  const std::byte* x = nullptr;
  bool bf16 = false;
  std::vector<int64_t> offsets;  // element offset of each row's first element
  int64_t n = 0;                 // row length (contiguous)
  __m512 load(int64_t row, int64_t j, __mmask16 m) const {
    const int64_t at = offsets[static_cast<size_t>(row)] + j;
    return bf16 ? vec::load_bf16(reinterpret_cast<const uint16_t*>(x) + at, m)
                : vec::load_f32(reinterpret_cast<const float*>(x) + at, m);
  }
};

// Per lane (row r0 + lane): the left-to-right f32 sum over the row of x (center empty) or of (x − center)².
__m512 row_sums(const Rows& rows, int64_t r0, int64_t count, const __m512* center) {
  __m512 acc = _mm512_setzero_ps();
  __m512 t[kLanes];
  for (int64_t j0 = 0; j0 < rows.n; j0 += kLanes) {
    const int64_t cols = std::min(kLanes, rows.n - j0);
    const __mmask16 m = vec::tail_mask(cols);
    for (int64_t i = 0; i < kLanes; ++i) t[i] = rows.load(r0 + std::min(i, count - 1), j0, m);
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

// out row = affine((x − mean)·rstd), as norm_ref.cpp's Affine::apply.
void normalize_row(const Rows& rows, int64_t row, float mean, float rstd, const Affine& a, const Tensor& out) {
  const __m512 vm = _mm512_set1_ps(mean), vr = _mm512_set1_ps(rstd), one = _mm512_set1_ps(1.0f);
  const bool bf16_out = out.dtype() == DType::BF16;
  for (int64_t j = 0; j < rows.n; j += kLanes) {
    const __mmask16 m = vec::tail_mask(rows.n - j);
    __m512 y = vec::mul_rn(vec::sub_rn(rows.load(row, j, m), vm), vr);
    if (a.weight != nullptr) {
      __m512 w = vec::load_f32(a.weight + j, m);
      if (a.one_plus) w = vec::add_rn(one, w);
      y = vec::mul_rn(y, w);
    }
    if (a.bias != nullptr) y = vec::add_rn(y, vec::load_f32(a.bias + j, m));
    const int64_t at = row * rows.n + j;
    if (bf16_out)
      vec::store_bf16(out.data<uint16_t>() + at, y, m);
    else
      vec::store_f32(out.data<float>() + at, y, m);
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

  Rows rows;
  rows.x = x.raw();
  rows.bf16 = x.dtype() == DType::BF16;
  rows.n = n;
  const int64_t count = x.numel() / n;
  rows.offsets.resize(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {  // row r -> element offset over the outer dims' strides
    int64_t rem = r, off = 0;
    for (int d = x.rank() - 2; d >= 0; --d) {
      off += (rem % x.dim(d)) * x.strides()[d];
      rem /= x.dim(d);
    }
    rows.offsets[static_cast<size_t>(r)] = off;
  }
  const bool layer = kind == OpKind::LayerNorm;
  const int64_t groups = (count + kLanes - 1) / kLanes;
  parallel_for(groups, 1, [&](int64_t g0, int64_t g1) {
    alignas(64) float sums[kLanes], means[kLanes];
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t r0 = g * kLanes, live = std::min(kLanes, count - r0);
      __m512 center = _mm512_setzero_ps();
      if (layer) {  // mean_of: sum / n
        _mm512_store_ps(sums, row_sums(rows, r0, live, nullptr));
        for (int64_t i = 0; i < live; ++i) means[i] = sums[i] / static_cast<float>(n);
        center = _mm512_load_ps(means);
      }
      // mean_square_of(row, center): for RmsNorm center 0, and (x − 0)² = x² exactly.
      _mm512_store_ps(sums, row_sums(rows, r0, live, &center));
      for (int64_t i = 0; i < live; ++i) {
        const float rstd = 1.0f / std::sqrt(sums[i] / static_cast<float>(n) + attrs.eps);
        normalize_row(rows, r0 + i, layer ? means[i] : 0.0f, rstd, affine, out);
      }
    }
  });
  return true;
}

}  // namespace ltx::cpu::opt
