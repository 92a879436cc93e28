// opt::try_pixel_norm (pixel_norm_opt.cpp) against the reference kernel (norm_ref.cpp): PixelNorm over the
// channels of [B, C, F, H, W] and over a middle axis of other ranks, with a column count that is not a multiple of
// the kernel's block (block tails), eps as the video VAE uses it, and inputs scaled so the squares span many
// binades. The kernel sums each column over the channels in the reference's order with the same f32 operations, so
// outputs must be identical byte for byte. Declined calls (last axis, bf16, non-contiguous) leave the dispatcher
// on the reference.
#include <cstring>

#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

NormAttrs pixel_attrs(int axis, float eps) {
  NormAttrs a;
  a.axis = axis;
  a.eps = eps;
  return a;
}

TEST(PixelNormOpt, MatchesReferenceByteForByte) {
  struct Case {
    Shape shape;
    int axis;
  };
  const std::vector<Case> cases = {{{1, 8, 3, 5, 7}, 1},     // 105 columns: one short block
                                   {{2, 13, 2, 33, 40}, 1},  // 2640 columns: two full blocks and a tail
                                   {{3, 5, 17}, 1},          // 1-D rows
                                   {{4, 6, 16}, 0}};         // outer extent 1
  uint32_t seed = 11;
  for (const Case& c : cases)
    for (float eps : {1e-8f, 1e-6f}) {
      const NormAttrs a = pixel_attrs(c.axis, eps);
      Tensor x = random_tensor(DType::F32, c.shape, seed++, -3.0f, 3.0f);
      float* v = x.data<float>();
      for (int64_t i = 0; i < x.numel(); i += 7) v[i] *= 1e-3f;  // small values next to large ones
      const std::vector<Tensor> in{x};
      const std::string what = c.shape.str() + " axis " + std::to_string(c.axis) + " eps " + std::to_string(eps);
      const Tensor ref = run_reference(OpKind::PixelNorm, a, in);
      Tensor opt = output_for(OpKind::PixelNorm, a, in);
      ASSERT_TRUE(cpu::opt::try_pixel_norm(a, in, opt)) << what;
      EXPECT_EQ(std::memcmp(opt.raw(), ref.raw(), ref.nbytes()), 0) << what;
    }
}

TEST(PixelNormOpt, DeclinesWhatItDoesNotHandle) {
  const Tensor x = random_tensor(DType::F32, {2, 8, 4, 6}, 3);
  Tensor out = Tensor::empty(DType::F32, x.shape());
  const std::vector<Tensor> last{x};
  EXPECT_FALSE(cpu::opt::try_pixel_norm(pixel_attrs(-1, 1e-8f), last, out)) << "last axis";
  const std::vector<Tensor> bf16{x.to(DType::BF16)};
  EXPECT_FALSE(cpu::opt::try_pixel_norm(pixel_attrs(1, 1e-8f), bf16, out)) << "bf16 input";
  const std::vector<Tensor> strided{non_contiguous(x)};
  EXPECT_FALSE(cpu::opt::try_pixel_norm(pixel_attrs(1, 1e-8f), strided, out)) << "non-contiguous";
  // Through the dispatcher the declined strided call is the reference's.
  const Tensor ref = run_reference(OpKind::PixelNorm, pixel_attrs(1, 1e-8f), last);
  const Tensor dispatched = run_dispatched(OpKind::PixelNorm, pixel_attrs(1, 1e-8f), strided);
  EXPECT_EQ(std::memcmp(dispatched.raw(), ref.raw(), ref.nbytes()), 0);
}

}  // namespace
}  // namespace ltx::test
