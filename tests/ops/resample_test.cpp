// DepthToSpace, SpaceToDepth and UpsampleNearest against torch (pixel_shuffle/pixel_unshuffle, einops patterns
// as LTX's VAE writes them, F.interpolate nearest) in 1-3 spatial dims, and their inference errors.
#include "golden_a.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::DepthToSpace, OpKind::SpaceToDepth, OpKind::UpsampleNearest);

ResampleAttrs factors(int spatial, int64_t f0, int64_t f1 = 1, int64_t f2 = 1) {
  ResampleAttrs a;
  a.spatial = spatial;
  a.factor = {f0, f1, f2};
  return a;
}

struct Case {
  const char* name;
  OpKind kind;
  ResampleAttrs attrs;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"d2s_1d", OpKind::DepthToSpace, factors(1, 3)},
      {"d2s_2d", OpKind::DepthToSpace, factors(2, 2, 2)},
      {"d2s_2d_uneven", OpKind::DepthToSpace, factors(2, 2, 3)},
      {"d2s_3d", OpKind::DepthToSpace, factors(3, 2, 3, 2)},
      {"s2d_1d", OpKind::SpaceToDepth, factors(1, 3)},
      {"s2d_2d", OpKind::SpaceToDepth, factors(2, 2, 2)},
      {"s2d_3d", OpKind::SpaceToDepth, factors(3, 2, 3, 2)},
      {"up_1d", OpKind::UpsampleNearest, factors(1, 3)},
      {"up_2d", OpKind::UpsampleNearest, factors(2, 2, 3)},
      {"up_3d", OpKind::UpsampleNearest, factors(3, 1, 2, 3)},
  };
  return c;
}

const GoldenFile& golden() {
  static const GoldenFile g("resample");
  return g;
}

TEST(Resample, MatchesTorch) {
  for (const Case& c : cases()) check_golden(golden(), c.name, c.kind, c.attrs, kExact);
}

// Pure data movement commutes with rounding, so bf16(torch's f32 result) is torch's result on bf16 inputs.
TEST(Resample, MovesBf16Exactly) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = golden().inputs(c.name);
    for (Tensor& t : in) t = t.to(DType::BF16);
    const Tensor out = run_reference(c.kind, c.attrs, in);
    EXPECT_EQ(out.dtype(), DType::BF16);
    expect_close(out, golden().output(c.name).to(DType::BF16), 0.0f, 0.0f);
  }
}

TEST(Resample, SpaceToDepthInvertsDepthToSpace) {
  const Tensor x = random_tensor(DType::F32, Shape{2, 12, 3, 2, 5}, 7);
  const ResampleAttrs a = factors(3, 3, 2, 2);
  const Tensor up = run_reference(OpKind::DepthToSpace, a, {x});
  EXPECT_EQ(up.shape(), (Shape{2, 1, 9, 4, 10}));
  expect_close(run_reference(OpKind::SpaceToDepth, a, {up}), x, 0.0f, 0.0f);
}

TEST(Resample, InferenceErrors) {
  const DType f = DType::F32;
  expect_infer_error(OpKind::DepthToSpace, factors(2, 2, 2), {{f, {2, 6, 4, 5}}},
                     {"depth_to_space", "[2, 6, 4, 5]", "block size 4"});
  expect_infer_error(OpKind::SpaceToDepth, factors(2, 2, 3), {{f, {2, 3, 4, 5}}},
                     {"space_to_depth", "spatial dim 1", "[2, 3, 4, 5]"});
  expect_infer_error(OpKind::UpsampleNearest, factors(3, 2, 2, 2), {{f, {2, 3, 4, 5}}},
                     {"upsample_nearest", "3 spatial dims", "[2, 3, 4, 5]"});
  expect_infer_error(OpKind::UpsampleNearest, factors(1, 0), {{f, {2, 3, 4}}}, {"upsample_nearest", "factor 0"});
  expect_infer_error(OpKind::UpsampleNearest, factors(4, 2), {{f, {2, 3, 4}}}, {"upsample_nearest", "spatial"});
  expect_infer_error(OpKind::DepthToSpace, factors(1, 1), {{DType::Q8_0, {2, 3, 32}}}, {"depth_to_space", "q8_0"});
}

}  // namespace
}  // namespace ltx::test
