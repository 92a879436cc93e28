// RowNormalizer: the scalar path repeats norm_ref.cpp's formulas (mean_of, mean_square_of, then (x − mean)·rstd)
// in its order; contiguous rows on AVX-512 CPUs take norm_opt_avx512.cpp's vector code.
#include "backend/cpu/norm/row_norm.h"

#include <cmath>
#include <variant>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "core/error.h"

namespace ltx::cpu {

NormRows::NormRows(const Tensor& t) : x(t.raw()), dtype(t.dtype()) {
  LTX_CHECK(t.rank() >= 1, "cpu", "normalizing rows of a scalar");
  n = t.dim(-1);
  stride = t.strides()[t.rank() - 1];
  const int64_t count = n == 0 ? 0 : t.numel() / n;
  offsets.resize(static_cast<size_t>(count));
  for (int64_t r = 0; r < count; ++r) {  // row r -> element offset over the outer dims' strides
    int64_t rem = r, off = 0;
    for (int d = t.rank() - 2; d >= 0; --d) {
      off += (rem % t.dim(d)) * t.strides()[d];
      rem /= t.dim(d);
    }
    offsets[static_cast<size_t>(r)] = off;
  }
}

RowNormalizer::RowNormalizer(OpKind kind, const NormAttrs& attrs, const Tensor& x)
    : rows_(x), layer_(kind == OpKind::LayerNorm), eps_(attrs.eps) {
  LTX_CHECK((kind == OpKind::RmsNorm || kind == OpKind::LayerNorm) && attrs.weight == NormWeight::None && !attrs.bias,
            "cpu", "a fused program may start with RmsNorm or LayerNorm without weight or bias, not ", op_name(kind));
  LTX_CHECK(dtype_is_float(x.dtype()), "cpu", "normalizing rows of ", x.describe());
  const bool plain = x.dtype() == DType::F32 || x.dtype() == DType::BF16;
  vector_ = gemm::avx512_available() && plain && (rows_.stride == 1 || rows_.n == 1);
}

void RowNormalizer::statistics(int64_t r0, int64_t count, float* mean, float* rstd) const {
  if (vector_) return opt::norm_statistics_avx512(rows_, layer_, eps_, r0, count, mean, rstd);
  const auto es = static_cast<int64_t>(dtype_block_bytes(rows_.dtype));
  const auto n = static_cast<float>(rows_.n);
  for (int64_t i = 0; i < count; ++i) {
    const std::byte* row = rows_.x + rows_.offsets[static_cast<size_t>(r0 + i)] * es;
    const auto at = [&](int64_t j) { return load_as_f32(row + j * rows_.stride * es, rows_.dtype); };
    float center = 0.0f;
    if (layer_) {
      for (int64_t j = 0; j < rows_.n; ++j) center += at(j);
      center /= n;
    }
    float s = 0.0f;
    for (int64_t j = 0; j < rows_.n; ++j) s += (at(j) - center) * (at(j) - center);
    mean[i] = center;
    rstd[i] = 1.0f / std::sqrt(s / n + eps_);
  }
}

void RowNormalizer::normalize(int64_t row, float mean, float rstd, float* dst) const {
  if (vector_) return opt::normalize_row_avx512(rows_, row, mean, rstd, dst);
  const auto es = static_cast<int64_t>(dtype_block_bytes(rows_.dtype));
  const std::byte* x = rows_.x + rows_.offsets[static_cast<size_t>(row)] * es;
  for (int64_t j = 0; j < rows_.n; ++j) dst[j] = (load_as_f32(x + j * rows_.stride * es, rows_.dtype) - mean) * rstd;
}

}  // namespace ltx::cpu
