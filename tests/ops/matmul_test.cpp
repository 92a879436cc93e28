// MatMul against torch.matmul goldens (tools/reference/make_op_goldens_b.py), quantized weights against the f32
// matmul on their dequantized values, and shape-inference errors.
#include "golden_b.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::MatMul);

Tensor matmul(const Tensor& a, const Tensor& b, bool ta = false, bool tb = false) {
  return run_reference(OpKind::MatMul, MatMulAttrs{ta, tb}, {a, b});
}

struct Case {
  const char* name;
  bool ta, tb;
};
constexpr Case kCases[] = {{"plain", false, false},      {"batch_broadcast", false, false}, {"linear", false, true},
                           {"transpose_a", true, false}, {"transpose_both", true, true},    {"f16_weight", false, true},
                           {"bf16", false, false}};

TEST(MatMul, MatchesTorchGoldens) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    const Tensor a = golden_b("matmul", n + ".a"), b = golden_b("matmul", n + ".b");
    const Tensor expected = golden_b("matmul", n + ".out");
    const bool bf16 = expected.dtype() == DType::BF16;
    const float atol = bf16 ? kBf16Atol : kF32Atol, rtol = bf16 ? kBf16Rtol : kF32Rtol;
    const Tensor out = matmul(a, b, c.ta, c.tb);
    EXPECT_EQ(out.dtype(), a.dtype());
    expect_close(out, expected, atol, rtol, "contiguous");
    expect_close(matmul(non_contiguous(a), non_contiguous(b), c.ta, c.tb), expected, atol, rtol, "non-contiguous");
  }
}

// The batch dims torch broadcasts implicitly, passed as explicit stride-0 views, give the same result.
TEST(MatMul, StrideZeroBatchViews) {
  const Tensor a = golden_b("matmul", "batch_broadcast.a");  // [2,1,5,7]
  const Tensor b = golden_b("matmul", "batch_broadcast.b");  // [3,7,6]
  const Tensor out = matmul(a.broadcast_to(Shape{2, 3, 5, 7}), b.broadcast_to(Shape{2, 3, 7, 6}));
  expect_close(out, golden_b("matmul", "batch_broadcast.out"), kF32Atol, kF32Rtol);
}

// A quantized weight W [N, K] used as x·Wᵀ must equal the f32 matmul on W's dequantized values: both sum the same
// f32 products, so only the order of the additions may differ.
TEST(MatMul, QuantizedWeightMatchesDequantized) {
  for (DType q : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    SCOPED_TRACE(std::string(dtype_name(q)));
    const int64_t k = 512, n = 5;
    const Tensor w = random_tensor(q, Shape{n, k}, 11);
    const Tensor w_f32 = w.to(DType::F32);
    const Tensor x = random_tensor(DType::F32, Shape{2, 3, k}, 12);
    const Tensor expected = matmul(x, w_f32, false, true);
    expect_close(matmul(x, w, false, true), expected, 1e-5f, 1e-5f, "contiguous x");
    expect_close(matmul(non_contiguous(x), w, false, true), expected, 1e-5f, 1e-5f, "non-contiguous x");
    // bf16 activations: output bf16, one rounding of the same f32 sums.
    const Tensor xb = x.to(DType::BF16);
    expect_close(matmul(xb, w, false, true), matmul(xb, w_f32, false, true), 0.0f, kBf16Rtol, "bf16 x");
  }
}

// A row slice of a quantized weight (whole rows, a row stride larger than K) reads the right rows.
TEST(MatMul, QuantizedWeightRowSlice) {
  const Tensor w = random_tensor(DType::Q8_0, Shape{9, 64}, 21);
  const Tensor rows = w.slice(0, 2, 8, 2);  // rows 2, 4, 6
  const Tensor x = random_tensor(DType::F32, Shape{3, 64}, 22);
  expect_close(matmul(x, rows, false, true), matmul(x, rows.to(DType::F32), false, true), 1e-5f, 1e-5f);
}

TEST(MatMul, ShapeInferenceErrors) {
  const MatMulAttrs none{}, tb{false, true};
  expect_op_error(OpKind::MatMul, none, {{DType::F32, {2, 3}}, {DType::F32, {4, 5}}}, "inner dimensions differ");
  expect_op_error(OpKind::MatMul, tb, {{DType::F32, {2, 3}}, {DType::F32, {3, 5}}}, "inner dimensions differ");
  expect_op_error(OpKind::MatMul, none, {{DType::F32, {3}}, {DType::F32, {3, 5}}}, "rank >= 2");
  expect_op_error(OpKind::MatMul, none, {{DType::F32, {2, 4, 3}}, {DType::F32, {3, 3, 5}}}, "do not broadcast");
  expect_op_error(OpKind::MatMul, none, {{DType::I32, {2, 3}}, {DType::F32, {3, 5}}}, "a must be");
  expect_op_error(OpKind::MatMul, none, {{DType::F32, {2, 32}}, {DType::Q8_0, {32, 4}}}, "transpose_b");
  expect_op_error(OpKind::MatMul, tb, {{DType::F32, {2, 2, 32}}, {DType::Q8_0, {2, 4, 32}}}, "2-D [N, K]");
  expect_op_error(OpKind::MatMul, tb, {{DType::F32, {2, 48}}, {DType::Q4_K, {4, 48}}}, "block size");
  expect_op_error(OpKind::MatMul, none, {{DType::F32, {2, 3}}}, "2 inputs");
}

TEST(MatMul, ShapeInferenceBroadcastsBatch) {
  const TensorMeta a{DType::BF16, {4, 1, 5, 7}}, b{DType::F32, {3, 6, 7}};
  const std::vector<TensorMeta> in{a, b};
  const TensorMeta out = infer_output(OpKind::MatMul, MatMulAttrs{false, true}, in);
  EXPECT_EQ(out.dtype, DType::BF16);
  EXPECT_EQ(out.shape, (Shape{4, 3, 5, 6}));
}

TEST(MatMul, KernelRejectsWrongOutput) {
  const Tensor a = random_tensor(DType::F32, {2, 3}, 1), b = random_tensor(DType::F32, {3, 4}, 2);
  const Tensor wrong = Tensor::empty(DType::F32, Shape{2, 5});
  const std::vector<Tensor> in{a, b};
  EXPECT_THROW(cpu::run_reference(OpKind::MatMul, MatMulAttrs{}, in, wrong), Error);
}

}  // namespace
}  // namespace ltx::test
