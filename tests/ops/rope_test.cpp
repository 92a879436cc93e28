// Rope against ltx_core's own apply_rotary_emb (ltx_core/model/transformer/rope.py), goldens made by
// tools/reference/make_op_goldens_b.py, and shape-inference errors.
#include "golden_b.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Rope);

Tensor rope(RopeMode mode, const Tensor& x, const Tensor& cos, const Tensor& sin) {
  return run_reference(OpKind::Rope, RopeAttrs{mode}, {x, cos, sin});
}

struct Case {
  const char* name;
  RopeMode mode;
};
constexpr Case kCases[] = {{"interleaved", RopeMode::Interleaved},
                           {"split", RopeMode::SplitHalf},
                           {"interleaved_bf16", RopeMode::Interleaved},
                           {"split_bf16", RopeMode::SplitHalf}};

TEST(Rope, MatchesLtxCoreGoldens) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    const Tensor x = golden_b("rope", n + ".x"), cos = golden_b("rope", n + ".cos"), sin = golden_b("rope", n + ".sin");
    const Tensor expected = golden_b("rope", n + ".out");
    const bool bf16 = expected.dtype() == DType::BF16;
    const float atol = bf16 ? kBf16Atol : kF32Atol, rtol = bf16 ? kBf16Rtol : kF32Rtol;
    const Tensor out = rope(c.mode, x, cos, sin);
    EXPECT_EQ(out.dtype(), x.dtype());
    expect_close(out, expected, atol, rtol, "contiguous");
    expect_close(rope(c.mode, non_contiguous(x), non_contiguous(cos), non_contiguous(sin)), expected, atol, rtol,
                 "non-contiguous");
    expect_close(rope(c.mode, x, cos.broadcast_to(cos.shape()), sin), expected, atol, rtol, "stride-0 tables");
  }
}

// The DiT's call: x [B, T, H·Dh] with tables [B, H, T, Dh/2]; ltx_core reshapes x to heads inside
// apply_split_rotary_emb. Here the same is a permuted (non-contiguous) view of x, and the inverse view back.
TEST(Rope, SplitHalfOnHeadViewsMatchesLtxCore) {
  const Tensor x = golden_b("rope", "split_heads.x");                       // [2, 5, 24]
  const Tensor heads = x.reshape(Shape{2, 5, 3, 8}).permute({0, 2, 1, 3});  // [2, 3, 5, 8]
  const Tensor out = rope(RopeMode::SplitHalf, heads, golden_b("rope", "split_heads.cos"),
                          golden_b("rope", "split_heads.sin"));  // [2, 3, 5, 8]
  const Tensor back = out.permute({0, 2, 1, 3}).contiguous().reshape(Shape{2, 5, 24});
  expect_close(back, golden_b("rope", "split_heads.out"), kF32Atol, kF32Rtol);
}

// With cos = 1 and sin = 0 rope is the identity; with cos = 0, sin = 1 it is the bare rotation, which pins down
// which element of a pair (or which half) takes the minus sign.
TEST(Rope, RotationSigns) {
  const Tensor x = Tensor::from_floats(DType::F32, {1, 4}, {1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor one = Tensor::from_floats(DType::F32, {1}, {1.0f}), zero = Tensor::from_floats(DType::F32, {1}, {0.0f});
  expect_close(rope(RopeMode::Interleaved, x, one, zero), x, 0, 0, "identity");
  expect_close(rope(RopeMode::Interleaved, x, zero, one),
               Tensor::from_floats(DType::F32, {1, 4}, {-2.0f, 1.0f, -4.0f, 3.0f}), 0, 0, "interleaved");
  expect_close(rope(RopeMode::SplitHalf, x, zero, one),
               Tensor::from_floats(DType::F32, {1, 4}, {-3.0f, -4.0f, 1.0f, 2.0f}), 0, 0, "split half");
}

TEST(Rope, ShapeInferenceErrors) {
  const RopeAttrs inter{RopeMode::Interleaved}, split{RopeMode::SplitHalf};
  const TensorMeta x{DType::F32, {2, 3, 5, 8}};
  expect_op_error(OpKind::Rope, split, {{DType::F32, {2, 5, 7}}, {DType::F32, {5, 3}}, {DType::F32, {5, 3}}}, "even");
  expect_op_error(OpKind::Rope, split, {x, {DType::F32, {5, 8}}, {DType::F32, {5, 4}}}, "cos [5, 8]");
  expect_op_error(OpKind::Rope, inter, {x, {DType::F32, {5, 8}}, {DType::F32, {5, 4}}}, "sin [5, 4]");
  expect_op_error(OpKind::Rope, inter, {x, {DType::F32, {2, 2, 5, 8}}, {DType::F32, {5, 8}}}, "does not broadcast");
  expect_op_error(OpKind::Rope, inter, {x, {DType::F32, {1, 2, 3, 5, 8}}, {DType::F32, {5, 8}}}, "does not broadcast");
  expect_op_error(OpKind::Rope, inter, {x, {DType::F32, {5, 8}}}, "expects x, cos, sin");
  expect_op_error(OpKind::Rope, inter, {{DType::I64, {5, 8}}, {DType::F32, {5, 8}}, {DType::F32, {5, 8}}}, "f32");
}

}  // namespace
}  // namespace ltx::test
