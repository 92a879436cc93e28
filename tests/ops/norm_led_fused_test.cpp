// A fused program led by RmsNorm or LayerNorm (ops/fused.h; run_fused → RowNormalizer, row_norm.h), as the
// compiler builds for the DiT's norm → AdaLN modulation x̂·s + t:
//  - f32 output: byte-equal to the norm step (reference kernel, f32 out) followed by the chain step, on the AVX-512
//    rows (contiguous last axis, f32 and bf16 x, rows with gaps) and the scalar rows (strided last axis); odd row
//    counts (a 16-row group tail) and lengths (vector tails, one element).
//  - bf16 output: the f32 result rounded once.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/norm/row_norm.h"
#include "core/error.h"
#include "core/half.h"
#include "core/tensor.h"
#include "ops/fused_instr.h"
#include "ops/op_test_util.h"

namespace ltx::test {
namespace {

NormAttrs eps(float e) {
  NormAttrs a;
  a.eps = e;
  return a;
}

// leaves (x̂, s, t): x̂·s + t.
FusedProgram modulation() {
  FusedProgram p;
  p.n_leaves = 3;
  p.instrs = {instr(OpKind::Mul, {0, 1}), instr(OpKind::Add, {3, 2})};
  return p;
}

// leaves (x, s, t): norm(x)·s + t.
FusedProgram led_by(OpKind norm, const NormAttrs& a) {
  FusedProgram p;
  p.n_leaves = 3;
  p.instrs = {instr(norm, {0}, a), instr(OpKind::Mul, {3, 1}), instr(OpKind::Add, {4, 2})};
  return p;
}

// x with `shape`'s values in one of three layouts: contiguous, rows with gaps, a strided last axis.
Tensor laid_out(DType dtype, const Shape& shape, uint32_t seed, int layout) {
  const int64_t n = shape.dim(-1);
  if (layout == 1) {  // the first n of every row of a [.., n + 3] tensor, offset so the mean is not 0
    Shape wide = shape;
    wide[shape.rank() - 1] = n + 3;
    return random_tensor(dtype, wide, seed, -2.0f, 3.0f).slice(-1, 1, n + 1);
  }
  const Tensor x = random_tensor(dtype, shape, seed, -2.0f, 3.0f);
  return layout == 2 ? non_contiguous(x) : x;
}

TEST(NormLedFused, F32HasTheUnfusedBitsAndBf16RoundsOnce) {
  const std::vector<Shape> shapes = {{1, 1}, {3, 7}, {17, 16}, {2, 9, 33}, {35, 300}, {40, 1030}};
  uint32_t seed = 1;
  for (OpKind kind : {OpKind::RmsNorm, OpKind::LayerNorm}) {
    const NormAttrs a = eps(kind == OpKind::RmsNorm ? 1e-6f : 1e-5f);
    for (const Shape& shape : shapes) {
      for (DType dtype : {DType::F32, DType::BF16}) {
        for (int layout = 0; layout < 3; ++layout) {
          const Tensor x = laid_out(dtype, shape, seed++, layout);
          const std::string what = std::string(op_name(kind)) + " " + shape.str() + " " +
                                   std::string(dtype_name(dtype)) + " layout " + std::to_string(layout);
          // scale broadcast per row ([.., 1, n]), shift of the full shape.
          Shape row = shape;
          row[shape.rank() - 2] = 1;
          const Tensor s = random_tensor(DType::F32, row, seed++, 0.5f, 1.5f);
          const Tensor t = random_tensor(DType::F32, shape, seed++);

          Tensor normed = Tensor::empty(DType::F32, shape);  // the norm step in f32, as a validation plan has it
          cpu::run_reference(kind, a, std::vector<Tensor>{x}, normed);
          Tensor expect = Tensor::empty(DType::F32, shape);
          cpu::run_fused(modulation(), std::vector<Tensor>{normed, s, t}, expect);

          Tensor got =
              Tensor::from_floats(DType::F32, shape, std::vector<float>(static_cast<size_t>(shape.numel()), 7));
          cpu::run_fused(led_by(kind, a), std::vector<Tensor>{x, s, t}, got);
          ASSERT_EQ(got.nbytes(), expect.nbytes());
          EXPECT_EQ(std::memcmp(got.raw(), expect.raw(), got.nbytes()), 0) << what;

          Tensor got16 = Tensor::empty(DType::BF16, shape);
          cpu::run_fused(led_by(kind, a), std::vector<Tensor>{x, s, t}, got16);
          const auto f = expect.to_floats();
          std::vector<uint16_t> once(f.size());
          for (size_t i = 0; i < f.size(); ++i) once[i] = f32_to_bf16(f[i]);
          EXPECT_EQ(std::memcmp(got16.raw(), once.data(), got16.nbytes()), 0) << what << " -> bf16";
        }
      }
    }
  }
}

// The statistics and normalized rows directly, scalar and vector paths alike, against the reference kernel's
// output; and the forms a fused program may not lead with are refused.
TEST(NormLedFused, RowNormalizerGivesTheReferenceRows) {
  const Tensor x = laid_out(DType::F32, {21, 45}, 77, 0);
  for (OpKind kind : {OpKind::RmsNorm, OpKind::LayerNorm}) {
    for (const Tensor& in : {x, non_contiguous(x)}) {
      Tensor expect = Tensor::empty(DType::F32, x.shape());
      cpu::run_reference(kind, eps(1e-6f), std::vector<Tensor>{in}, expect);
      const cpu::RowNormalizer rows(kind, eps(1e-6f), in);
      ASSERT_EQ(rows.rows(), 21);
      ASSERT_EQ(rows.length(), 45);
      std::vector<float> got(static_cast<size_t>(21 * 45));
      for (int64_t r0 = 0; r0 < 21; r0 += cpu::RowNormalizer::kGroup) {
        float mean[cpu::RowNormalizer::kGroup], rstd[cpu::RowNormalizer::kGroup];
        const int64_t count = std::min<int64_t>(cpu::RowNormalizer::kGroup, 21 - r0);
        rows.statistics(r0, count, mean, rstd);
        for (int64_t i = 0; i < count; ++i) rows.normalize(r0 + i, mean[i], rstd[i], got.data() + (r0 + i) * 45);
      }
      EXPECT_EQ(std::memcmp(got.data(), expect.raw(), expect.nbytes()), 0) << op_name(kind);
    }
  }
  NormAttrs weighted = eps(1e-6f);
  weighted.weight = NormWeight::Plain;
  EXPECT_THROW((void)cpu::RowNormalizer(OpKind::RmsNorm, weighted, x), Error);
  EXPECT_THROW((void)cpu::RowNormalizer(OpKind::GroupNorm, eps(1e-6f), x), Error);
}

}  // namespace
}  // namespace ltx::test
