// Normalization ops against torch goldens (torch.softmax, F.rms_norm, transformers' Gemma3RMSNorm, F.layer_norm,
// F.group_norm, ltx_core's PixelNorm) in f32 and bf16, with non-contiguous inputs, and their inference errors.
#include "golden_a.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Softmax, OpKind::RmsNorm, OpKind::LayerNorm, OpKind::GroupNorm, OpKind::PixelNorm);

// f32: statistics over at most 70 elements accumulated in a different order than torch's vectorized reductions
// (~1e-7 relative each), then one sqrt/exp; 1e-5 relative stays far below what a misplaced eps or a wrong
// variance (biased vs unbiased: 1/n ~ 3% here) would change.
constexpr Tolerance kF32{1e-6f, 1e-5f};

NormAttrs norm_attrs(float eps, NormWeight weight = NormWeight::None, bool bias = false, int groups = 1,
                     int axis = -1) {
  NormAttrs a;
  a.eps = eps;
  a.weight = weight;
  a.bias = bias;
  a.groups = groups;
  a.axis = axis;
  return a;
}

struct Case {
  const char* name;
  OpKind kind;
  OpAttrs attrs;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"softmax", OpKind::Softmax, SoftmaxAttrs{0.7f}},
      {"rms_norm", OpKind::RmsNorm, norm_attrs(1e-6f)},
      {"rms_norm_weight", OpKind::RmsNorm, norm_attrs(1e-5f, NormWeight::Plain)},
      {"rms_norm_one_plus", OpKind::RmsNorm, norm_attrs(1e-6f, NormWeight::OnePlus)},
      {"layer_norm", OpKind::LayerNorm, norm_attrs(1e-5f)},
      {"layer_norm_affine", OpKind::LayerNorm, norm_attrs(1e-5f, NormWeight::Plain, true)},
      {"layer_norm_bias", OpKind::LayerNorm, norm_attrs(1e-6f, NormWeight::None, true)},
      {"group_norm", OpKind::GroupNorm, norm_attrs(1e-6f, NormWeight::Plain, true, 3)},
      {"group_norm_plain", OpKind::GroupNorm, norm_attrs(1e-5f, NormWeight::None, false, 2)},
      {"group_norm_3d", OpKind::GroupNorm, norm_attrs(1e-6f, NormWeight::Plain, true, 4)},
      {"pixel_norm", OpKind::PixelNorm, norm_attrs(1e-6f, NormWeight::None, false, 1, 1)},
      {"pixel_norm_last", OpKind::PixelNorm, norm_attrs(1e-8f, NormWeight::None, false, 1, -1)},
      {"pixel_norm_small", OpKind::PixelNorm, norm_attrs(1e-6f, NormWeight::None, false, 1, 1)},
  };
  return c;
}

const GoldenFile& golden() {
  static const GoldenFile g("norm");
  return g;
}

TEST(Norm, MatchesTorchInF32) {
  for (const Case& c : cases()) check_golden(golden(), c.name, c.kind, c.attrs, kF32);
}

TEST(Norm, MatchesTorchInBf16) {
  for (const Case& c : cases()) check_golden(golden(), std::string(c.name) + "_bf16", c.kind, c.attrs, kBf16);
}

TEST(Norm, SoftmaxIsStableForLargeLogits) {
  // exp(1000) overflows f32: only a max-subtracting softmax gives the finite answer [e^-1, 1] / (1 + e^-1).
  const Tensor x = Tensor::from_floats(DType::F32, Shape{1, 2}, {999.0f, 1000.0f});
  const auto y = run_reference(OpKind::Softmax, SoftmaxAttrs{}, {x}).to_floats();
  EXPECT_NEAR(y[0], 0.26894142f, 1e-6f);
  EXPECT_NEAR(y[1], 0.73105858f, 1e-6f);
}

TEST(Norm, InferenceErrors) {
  const DType f = DType::F32;
  expect_infer_error(OpKind::RmsNorm, norm_attrs(1e-6f, NormWeight::Plain), {{f, {3, 7}}, {f, {3}}},
                     {"rms_norm", "weight must be [7]", "[3, 7]", "[3]"});
  expect_infer_error(OpKind::RmsNorm, norm_attrs(1e-6f, NormWeight::Plain), {{f, {3, 7}}},
                     {"rms_norm", "expects 2 inputs"});
  expect_infer_error(OpKind::LayerNorm, norm_attrs(1e-6f, NormWeight::Plain, true), {{f, {3, 7}}, {f, {7}}, {f, {6}}},
                     {"layer_norm", "bias must be [7]", "[6]"});
  expect_infer_error(OpKind::GroupNorm, norm_attrs(1e-6f, NormWeight::None, false, 4), {{f, {2, 6, 5}}},
                     {"group_norm", "6 channels", "[2, 6, 5]", "4 groups"});
  expect_infer_error(OpKind::GroupNorm, norm_attrs(1e-6f, NormWeight::Plain, false, 2), {{f, {2, 6, 5}}, {f, {5}}},
                     {"group_norm", "weight must be [6]"});
  expect_infer_error(OpKind::PixelNorm, norm_attrs(1e-6f, NormWeight::None, false, 1, 3), {{f, {2, 6, 5}}},
                     {"pixel_norm", "axis 3", "[2, 6, 5]"});
  expect_infer_error(OpKind::PixelNorm, norm_attrs(1e-6f, NormWeight::Plain), {{f, {2, 6}}, {f, {6}}},
                     {"pixel_norm", "no weight"});
  expect_infer_error(OpKind::Softmax, NormAttrs{}, {{f, {2, 6}}}, {"softmax", "attribute"});
  expect_infer_error(OpKind::Softmax, SoftmaxAttrs{}, {{DType::I64, {2, 6}}}, {"softmax", "i64[2, 6]"});
}

}  // namespace
}  // namespace ltx::test
