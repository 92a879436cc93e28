// The channels-last slab path of opt::try_conv (conv_opt.cpp) with its slab and weight-chunk sizes set tiny, so
// that small tensors run as many slabs (one output row each, rows kept from the previous slab and the rest
// packed), several output-channel chunks (16-channel multiples and a short last one) and a shorter tail slab:
// against the reference kernel with conv_opt_test's tolerances, on LTX's temporal padding (replicate, causal and
// symmetric), zero padding of the outer dim, a time stride, space reflection (our own packing pass), 1-D and 2-D;
// f32 and bf16 weights (f32 activations rounded to bf16 once, as in production). Each call's own allocations
// (what it reports) must stay within conv_workspace_bytes, the bound the decode planner adds to a plan's peak; with
// the default sizes the bound of an LTX-2.3 decoder-sized conv is tens of MB, not the copies of whole tensors.
#include "backend/cpu/conv/conv_opt.h"
#include "backend/cpu/optimized.h"
#include "op_test_util.h"
#include "ops/infer.h"

namespace ltx::test {
namespace {

constexpr auto Z = PadMode::Zeros, R = PadMode::Reflect, P = PadMode::Replicate;

struct SlabCase {
  const char* name;
  Shape x, w;
  ConvAttrs attrs;
};

std::vector<SlabCase> slab_cases() {
  return {
      {"3d causal replicate",
       {2, 20, 7, 5, 6},
       {40, 20, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1)},
      {"3d symmetric replicate",
       {1, 24, 6, 4, 5},
       {33, 24, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {P, Z, Z}, 1)},
      {"3d zero time pad, time stride 2",
       {1, 16, 9, 4, 4},
       {20, 16, 3, 1, 3},
       conv_attrs(3, {2, 1, 1}, {1, 1, 1}, {1, 0, 1}, {1, 0, 1}, {Z, Z, Z}, 1)},
      {"3d reflect in space",
       {1, 17, 5, 6, 7},
       {18, 17, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, R, R}, 1)},
      {"1d dilated reflect", {2, 32, 45}, {48, 32, 5}, conv_attrs(1, {1}, {3}, {6}, {6}, {R}, 1)},
      {"2d replicate rows", {1, 19, 11, 13}, {21, 19, 3, 3}, conv_attrs(2, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {P, Z}, 1)},
  };
}

struct LimitsGuard {  // tiny slabs and chunks for the test, defaults restored after
  LimitsGuard(size_t slab, size_t chunk) { cpu::opt::set_conv_slab_limits(slab, chunk); }
  ~LimitsGuard() { cpu::opt::set_conv_slab_limits(size_t{24} << 20, size_t{24} << 20); }
};

size_t bound_of(const ConvAttrs& a, const std::vector<Tensor>& in, const Tensor& out) {
  return cpu::opt::conv_workspace_bytes(a, {in[0].dtype(), in[0].shape()}, {in[1].dtype(), in[1].shape()},
                                        {out.dtype(), out.shape()});
}

TEST(ConvSlabs, ManySlabsAndChunksMatchTheReferenceWithinTheWorkspaceBound) {
  const LimitsGuard tiny(4096, 2048);
  uint32_t seed = 300;
  for (const SlabCase& c : slab_cases()) {
    SCOPED_TRACE(c.name);
    for (DType wt : {DType::F32, DType::BF16}) {
      std::vector<Tensor> in{random_tensor(DType::F32, c.x, seed++), random_tensor(wt, c.w, seed++),
                             random_tensor(DType::F32, Shape{c.w[0]}, seed++)};
      Tensor out = output_for(OpKind::Conv, c.attrs, in);
      ASSERT_TRUE(cpu::opt::conv_with_path(cpu::opt::ConvPath::OneDnn, OpKind::Conv, c.attrs, in, out));
      std::vector<Tensor> rounded = in;  // production: the activations rounded to bf16 once
      if (wt == DType::BF16) rounded[0] = in[0].to(DType::BF16).to(DType::F32);
      expect_close(out, run_reference(OpKind::Conv, c.attrs, rounded), 1e-4f, 1e-4f,
                   std::string(dtype_name(wt)).c_str());
      EXPECT_GT(cpu::opt::last_conv_workspace_bytes(), 0u);
      EXPECT_LE(cpu::opt::last_conv_workspace_bytes(), bound_of(c.attrs, in, out)) << dtype_name(wt);
      // bf16 activations and a bf16 output (oneDNN's reorders instead of our transpositions).
      if (wt == DType::BF16) {
        std::vector<Tensor> all16 = in;
        all16[0] = in[0].to(DType::BF16);
        Tensor out16 = Tensor::empty(DType::BF16, out.shape());
        ASSERT_TRUE(cpu::opt::conv_with_path(cpu::opt::ConvPath::OneDnn, OpKind::Conv, c.attrs, all16, out16));
        expect_close(out16, run_reference(OpKind::Conv, c.attrs, all16), 1e-2f, 8e-3f, "bf16");
        EXPECT_LE(cpu::opt::last_conv_workspace_bytes(), bound_of(c.attrs, all16, out16));
      }
    }
  }
}

// Weights kept per chunk in a plan step's slot: reused bit for bit, rebuilt for weights of another identity.
TEST(ConvSlabs, PreparedChunksAreReusedAndRebuilt) {
  const LimitsGuard tiny(4096, 2048);
  const SlabCase c = slab_cases()[0];
  std::vector<Tensor> in{random_tensor(DType::F32, c.x, 7), random_tensor(DType::BF16, c.w, 8),
                         random_tensor(DType::F32, Shape{c.w[0]}, 9)};
  PreparedSlot slot;
  Tensor first = output_for(OpKind::Conv, c.attrs, in), second = output_for(OpKind::Conv, c.attrs, in);
  ASSERT_TRUE(cpu::opt::conv_with_path(cpu::opt::ConvPath::OneDnn, OpKind::Conv, c.attrs, in, first, &slot));
  ASSERT_NE(slot, nullptr);
  const PreparedWeights* kept = slot.get();
  ASSERT_TRUE(cpu::opt::conv_with_path(cpu::opt::ConvPath::OneDnn, OpKind::Conv, c.attrs, in, second, &slot));
  EXPECT_EQ(slot.get(), kept);
  expect_close(second, first, 0.0f, 0.0f);
  std::vector<Tensor> other = in;
  other[1] = random_tensor(DType::BF16, c.w, 10);
  Tensor third = output_for(OpKind::Conv, c.attrs, other);
  ASSERT_TRUE(cpu::opt::conv_with_path(cpu::opt::ConvPath::OneDnn, OpKind::Conv, c.attrs, other, third, &slot));
  EXPECT_NE(slot.get(), kept);
  std::vector<Tensor> rounded = other;
  rounded[0] = other[0].to(DType::BF16).to(DType::F32);
  expect_close(third, run_reference(OpKind::Conv, c.attrs, rounded), 1e-4f, 1e-4f);
}

// With the default sizes the bound of the LTX-2.3 decoder's widest-activation conv (128 -> 128 channels over
// 17 frames of 128x192) is a few tens of MB, against ~0.5 GB of whole-tensor copies (input padded and reordered,
// output reordered) the previous path made.
TEST(ConvSlabs, DecoderSizedBoundIsTensOfMegabytes) {
  const ConvAttrs a = conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {P, Z, Z}, 1);
  const Shape x{1, 128, 17, 128, 192}, w{128, 128, 3, 3, 3};
  const size_t bound = cpu::opt::conv_workspace_bytes(a, {DType::F32, x}, {DType::BF16, w}, {DType::F32, x});
  EXPECT_LT(bound, size_t{64} << 20);
  EXPECT_GT(bound, size_t{128 * 128 * 192 * 4});  // at least one output row
}

}  // namespace
}  // namespace ltx::test
