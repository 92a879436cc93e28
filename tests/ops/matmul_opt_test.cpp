// The optimized MatMul (opt::try_matmul, and cpu::run which dispatches to it) against the reference kernel on
// odd shapes that are multiples of no block size (MR 14, NR 32, KC 256/512, NC 512), every transpose,
// broadcast and folded batches, non-contiguous a, and f32 / bf16 / f16 / quantized weights.
//
// Tolerances come from an error bound per element, S = Σ_k |a_mk|·|b_kn| (the reference run on |a|, |b|):
//  - f32 products and sums in a different order: |Δ| <= K·2^-24·S (a loose form of the classic γ_K bound).
//  - bf16 products are exact in f32, so bf16·bf16 differs only by summation order, as above.
//  - rounding one operand to bf16 (f32 a with bf16 weights; bf16 a with quantized weights) changes each term
//    by at most bf16's unit roundoff 2^-8 of itself: |Δ| <= 2^-8·S plus the summation term.
//  - a bf16 / f16 output is rounded once by both kernels; their f32 sums may sit on either side of a rounding
//    boundary, so one output ulp (at most 2^-7 / 2^-10 of |ref|) is added.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "core/tensor.h"
#include "ops/op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::MatMul);

Tensor abs_of(const Tensor& t) {
  std::vector<float> v = t.to_floats();
  for (float& x : v) x = std::fabs(x);
  return Tensor::from_floats(dtype_is_quantized(t.dtype()) ? DType::F32 : t.dtype(), t.shape(), v);
}

struct Tolerance {
  double operand_rounding = 0.0;  // 2^-8 when one operand is rounded to bf16 by the fast kernel
  double output_ulp = 0.0;        // relative ulp of the output dtype
};

Tolerance tolerance_for(DType a, DType b) {
  Tolerance t;
  const bool bf16_compute = b == DType::BF16 || (dtype_is_quantized(b) && a == DType::BF16);
  if (a == DType::F16) t.output_ulp = 1.0 / 1024;
  if (a == DType::BF16) t.output_ulp = 1.0 / 128;
  if (bf16_compute && a != DType::BF16) t.operand_rounding = 1.0 / 256;
  if (dtype_is_quantized(b) && a == DType::BF16) t.operand_rounding = 1.0 / 256;
  return t;
}

// Runs opt::try_matmul (must handle the call) and cpu::run, and checks both against the reference within the
// bound above.
void check(const MatMulAttrs& attrs, const Tensor& a, const Tensor& b, const char* what) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "this CPU lacks AVX-512 BF16; the fast kernel is not used";
  const OpAttrs op_attrs = attrs;
  const Tensor expected = run_reference(OpKind::MatMul, op_attrs, {a, b});
  const Tensor bound = run_reference(OpKind::MatMul, op_attrs, {abs_of(a), abs_of(b)});
  Tensor ours = output_for(OpKind::MatMul, op_attrs, std::vector<Tensor>{a, b});
  std::vector<Tensor> inputs{a, b};
  ASSERT_TRUE(cpu::opt::try_matmul(attrs, inputs, ours)) << what;
  const Tensor dispatched = run_dispatched(OpKind::MatMul, op_attrs, {a, b});

  const int64_t k = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  const Tolerance tol = tolerance_for(a.dtype(), b.dtype());
  const auto e = expected.to_floats(), s = bound.to_floats();
  for (const Tensor* actual : {static_cast<const Tensor*>(&ours), &dispatched}) {
    ASSERT_EQ(actual->shape(), expected.shape()) << what;
    const auto v = actual->to_floats();
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const double limit = (static_cast<double>(k) * 0x1p-24 + tol.operand_rounding) * s[i] * 1.01 +
                           tol.output_ulp * std::fabs(e[i]) + 1e-30;
      if (!(std::fabs(static_cast<double>(v[i]) - e[i]) <= limit) && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << what << (actual == &ours ? " (try_matmul)" : " (cpu::run)") << ": " << bad << " of "
                       << v.size() << " differ; first at " << first << ": " << v[first] << " vs " << e[first];
  }
}

struct Dims {
  int64_t m, n, k;
};
const Dims kOddDims[] = {{1, 1, 1}, {7, 33, 65}, {33, 65, 7}, {65, 257, 33}, {257, 7, 257},
                         {15, 40, 600}, {29, 550, 300}, {3, 1, 1030}};

Tensor operand(DType dt, int64_t rows, int64_t cols, bool transposed, uint32_t seed) {
  // transposed: stored [cols, rows] and used with the transpose flag, so the logical operand is [rows, cols].
  return random_tensor(dt, transposed ? Shape{cols, rows} : Shape{rows, cols}, seed);
}

void check_dtypes(DType ad, DType bd) {
  uint32_t seed = 1;
  for (const Dims& d : kOddDims) {
    for (int t = 0; t < 4; ++t) {
      const MatMulAttrs attrs{(t & 1) != 0, (t & 2) != 0};
      const Tensor a = operand(ad, d.m, d.k, attrs.transpose_a, seed++);
      const Tensor b = operand(bd, d.n, d.k, !attrs.transpose_b, seed++);  // logical [K, N]
      const std::string what = std::string(dtype_name(ad)) + "·" + std::string(dtype_name(bd)) + " M=" +
                               std::to_string(d.m) + " N=" + std::to_string(d.n) + " K=" + std::to_string(d.k) +
                               " ta=" + std::to_string(attrs.transpose_a) + " tb=" + std::to_string(attrs.transpose_b);
      check(attrs, a, b, what.c_str());
    }
  }
}

TEST(MatMulOpt, F32) { check_dtypes(DType::F32, DType::F32); }
TEST(MatMulOpt, BF16) { check_dtypes(DType::BF16, DType::BF16); }
TEST(MatMulOpt, F32ActivationsBF16Weights) { check_dtypes(DType::F32, DType::BF16); }
TEST(MatMulOpt, BF16ActivationsF32Weights) { check_dtypes(DType::BF16, DType::F32); }
TEST(MatMulOpt, F16) { check_dtypes(DType::F16, DType::F16); }

TEST(MatMulOpt, QuantizedWeights) {
  const DType quants[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};
  const Dims dims[] = {{1, 1, 256}, {7, 33, 768}, {65, 45, 256}, {20, 530, 512}};
  uint32_t seed = 100;
  for (DType q : quants)
    for (DType ad : {DType::F32, DType::BF16})
      for (const Dims& d : dims) {
        const Tensor a = random_tensor(ad, Shape{d.m, d.k}, seed++);
        const Tensor w = random_tensor(q, Shape{d.n, d.k}, seed++);  // Linear layout W [N, K]
        const std::string what = std::string(dtype_name(ad)) + "·" + std::string(dtype_name(q)) + " M=" +
                                 std::to_string(d.m) + " N=" + std::to_string(d.n) + " K=" + std::to_string(d.k);
        check({false, true}, a, w, what.c_str());
      }
}

TEST(MatMulOpt, BatchBroadcasting) {
  for (DType dt : {DType::F32, DType::BF16}) {
    // b batched and broadcast over a's leading dim; a's size-1 dim broadcast against b's.
    check({}, random_tensor(dt, Shape{2, 3, 9, 17}, 1), random_tensor(dt, Shape{3, 17, 35}, 2), "b batched");
    check({}, random_tensor(dt, Shape{2, 1, 9, 17}, 3), random_tensor(dt, Shape{1, 3, 17, 35}, 4), "both bcast");
    // A shared b folds a's batch dims into M (the Linear case), also through a size-1 dim.
    check({false, true}, random_tensor(dt, Shape{2, 1, 13, 40}, 5), random_tensor(dt, Shape{33, 40}, 6),
          "folded Linear");
    // a shared by every batch of b.
    check({true, false}, random_tensor(dt, Shape{19, 11}, 7), random_tensor(dt, Shape{4, 19, 70}, 8), "a shared");
  }
}

TEST(MatMulOpt, NonContiguousOperands) {
  for (DType dt : {DType::F32, DType::BF16}) {
    const Tensor a = non_contiguous(random_tensor(dt, Shape{3, 31, 45}, 11));  // swapped storage
    check({}, a, random_tensor(dt, Shape{45, 37}, 12), "a with swapped strides");
    const Tensor wide = random_tensor(dt, Shape{2, 31, 90}, 13);
    check({}, wide.slice(2, 1, 90, 2), random_tensor(dt, Shape{2, 45, 21}, 14), "a with k stride 2");
    const Tensor b = non_contiguous(random_tensor(dt, Shape{45, 37}, 15));
    check({}, random_tensor(dt, Shape{31, 45}, 16), b, "b with swapped strides");
    check({}, random_tensor(dt, Shape{31, 45}, 17), random_tensor(dt, Shape{45, 1}, 18).broadcast_to({45, 40}),
          "b broadcast along n (stride 0)");
  }
}

TEST(MatMulOpt, EmptyInnerDimensionGivesZeros) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const Tensor a = Tensor::empty(DType::F32, Shape{5, 0});
  const Tensor b = Tensor::empty(DType::F32, Shape{0, 6});
  Tensor out = Tensor::from_floats(DType::F32, Shape{5, 6}, std::vector<float>(30, 7.0f));
  std::vector<Tensor> inputs{a, b};
  ASSERT_TRUE(cpu::opt::try_matmul({}, inputs, out));
  for (float v : out.to_floats()) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace ltx::test
