// RmsNorm and LayerNorm without affine, one row at a time, for a fused program led by one (ops/fused.h): the rows'
// statistics a group at a time, then each row's normalized values in f32 for the rest of the program. Bits as the
// norm kernels': norm_ref.cpp sums each row left to right in f32, and the AVX-512 path (norm_opt_avx512.cpp, the
// same code as opt::try_norm) reproduces that order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "ops/op.h"

namespace ltx::cpu {

// x viewed as rows × its last axis (n elements, `stride` apart): where each row starts.
struct NormRows {
  const std::byte* x = nullptr;
  DType dtype = DType::F32;
  int64_t n = 0, stride = 1;
  std::vector<int64_t> offsets;  // element offset of each row's first element
  explicit NormRows(const Tensor& t);
};

class RowNormalizer {
 public:
  static constexpr int64_t kGroup = 16;  // rows per statistics call (one per AVX-512 lane)

  // kind RmsNorm or LayerNorm; attrs without weight or bias.
  RowNormalizer(OpKind kind, const NormAttrs& attrs, const Tensor& x);
  int64_t rows() const { return static_cast<int64_t>(rows_.offsets.size()); }
  int64_t length() const { return rows_.n; }
  // mean (0 for RmsNorm) and 1/sqrt(mean square + eps) of rows r0 .. r0 + count − 1, count <= kGroup.
  void statistics(int64_t r0, int64_t count, float* mean, float* rstd) const;
  // dst[j] = (x_j − mean)·rstd for j < length().
  void normalize(int64_t row, float mean, float rstd, float* dst) const;

 private:
  NormRows rows_;
  bool layer_ = false, vector_ = false;
  float eps_ = 0.0f;
};

// AVX-512 pieces (norm_opt_avx512.cpp), for rows whose last axis is contiguous (stride 1).
namespace opt {
void norm_statistics_avx512(const NormRows& rows, bool layer, float eps, int64_t r0, int64_t count, float* mean,
                            float* rstd);
void normalize_row_avx512(const NormRows& rows, int64_t row, float mean, float rstd, float* dst);
}  // namespace opt

}  // namespace ltx::cpu
