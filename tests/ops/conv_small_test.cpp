// The direct small-conv kernel (conv_small_avx512.cpp) against the reference kernel (conv_ref.cpp) on odd shapes:
// 1-D, 2-D, 3-D, strides (the gather path) and dilation, groups with output channels per group that are not a
// multiple of the 8-channel block, every pad mode and asymmetric pads, rows longer than one 256-wide task and with a
// tail, strided inputs and weights, with and without bias.
//
// Exactness. With bf16 weights the kernel rounds x to bf16, so each product is exact in f32 and its sums run in the
// reference's order: the output equals the reference on the rounded x exactly (f32 out), and so does its rounding
// to bf16 (bf16 out). With f32 weights the products are fused into the adds: 1e-4 + 1e-4·|ref| as conv_opt_test.
#include "backend/cpu/conv/conv_small.h"

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

struct Case {
  const char* name;
  Shape x;  // [B, C, *S]
  Shape w;  // [O, C/G, *K]
  ConvAttrs attrs;
  bool bias;
};

constexpr auto Z = PadMode::Zeros, R = PadMode::Reflect, P = PadMode::Replicate;

std::vector<Case> cases() {
  return {
      {"1d long row with tail", {1, 3, 601}, {5, 3, 7}, conv_attrs(1, {1}, {1}, {3}, {3}, {Z}, 1), true},
      {"1d dilated reflect", {2, 2, 300}, {2, 2, 11}, conv_attrs(1, {1}, {5}, {25}, {25}, {R}, 1), true},
      {"1d stride 3 replicate", {1, 4, 97}, {13, 4, 5}, conv_attrs(1, {3}, {1}, {4}, {1}, {P}, 1), false},
      {"1d groups 13 per group", {1, 6, 40}, {39, 2, 3}, conv_attrs(1, {1}, {2}, {2}, {2}, {Z}, 3), true},
      {"1d depthwise", {1, 5, 33}, {5, 1, 4}, conv_attrs(1, {1}, {1}, {2}, {1}, {R}, 5), true},
      {"2d mixed modes asymmetric",
       {1, 5, 13, 19},
       {11, 5, 3, 2},
       conv_attrs(2, {1, 1}, {1, 2}, {2, 0}, {0, 3}, {P, R}, 1),
       true},
      {"2d stride 2 both",
       {2, 4, 15, 35},
       {6, 4, 3, 3},
       conv_attrs(2, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {R, Z}, 1),
       true},
      {"2d 1x1 groups", {1, 8, 7, 5}, {12, 4, 1, 1}, conv_attrs(2, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {Z, Z}, 2), false},
      {"3d causal",
       {1, 8, 5, 9, 11},
       {12, 8, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1),
       true},
      {"3d causal reflect",
       {1, 3, 4, 7, 6},
       {9, 3, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, R, R}, 1),
       true},
      {"3d stride groups dilation",
       {2, 8, 7, 9, 10},
       {10, 4, 3, 3, 2},
       conv_attrs(3, {2, 1, 2}, {1, 2, 1}, {1, 2, 0}, {1, 2, 1}, {Z, Z, Z}, 2),
       true},
  };
}

std::vector<Tensor> inputs_of(const Case& c, DType xt, DType wt, uint32_t seed) {
  std::vector<Tensor> in{random_tensor(xt, c.x, seed), random_tensor(wt, c.w, seed + 1)};
  if (c.bias) in.push_back(random_tensor(DType::F32, Shape{c.w[0]}, seed + 2));
  return in;
}

Tensor small_conv(const Case& c, const std::vector<Tensor>& in, DType out_dtype = DType::F32) {
  Tensor out = output_for(OpKind::Conv, c.attrs, in);
  if (out.dtype() != out_dtype) out = Tensor::empty(out_dtype, out.shape());
  EXPECT_TRUE(cpu::opt::small_conv_supports(c.attrs, in, out));
  cpu::opt::run_small_conv(c.attrs, in, out);
  return out;
}

// The reference with x rounded to bf16 first (what the kernel computes with bf16 weights).
Tensor reference_on_rounded_x(const Case& c, std::vector<Tensor> in) {
  in[0] = in[0].to(DType::BF16).to(DType::F32);
  return run_reference(OpKind::Conv, c.attrs, in);
}

class ConvSmall : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::gemm::avx512_available())
      GTEST_SKIP() << "this CPU lacks AVX-512 with BF16; the small-conv kernel declines";
  }
};

TEST_F(ConvSmall, Bf16WeightsEqualTheReferenceOnRoundedActivationsExactly) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = inputs_of(c, DType::F32, DType::BF16, seed += 5);
    expect_close(small_conv(c, in), reference_on_rounded_x(c, in), 0.0f, 0.0f, "f32 x, bf16 w");
    std::vector<Tensor> strided = in;
    strided[0] = non_contiguous(in[0]);
    strided[1] = non_contiguous(in[1]);
    expect_close(small_conv(c, strided), reference_on_rounded_x(c, in), 0.0f, 0.0f, "strided x and w");
    if (c.bias) {
      strided[2] = in[2].to(DType::BF16);
      std::vector<Tensor> rounded_bias = in;
      rounded_bias[2] = strided[2];
      expect_close(small_conv(c, strided), reference_on_rounded_x(c, rounded_bias), 0.0f, 0.0f, "bf16 bias");
    }
    // bf16 activations and output: the same f32 sums, rounded once at the store as the reference does.
    std::vector<Tensor> bf16 = in;
    bf16[0] = in[0].to(DType::BF16);
    expect_close(small_conv(c, bf16, DType::BF16), run_reference(OpKind::Conv, c.attrs, bf16), 0.0f, 0.0f,
                 "bf16 x, w and out");
  }
}

TEST_F(ConvSmall, F32MatchesReference) {
  uint32_t seed = 100;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = inputs_of(c, DType::F32, DType::F32, seed += 5);
    const Tensor expected = run_reference(OpKind::Conv, c.attrs, in);
    expect_close(small_conv(c, in), expected, 1e-4f, 1e-4f, "contiguous");
    in[0] = non_contiguous(in[0]);
    in[1] = non_contiguous(in[1]);
    expect_close(small_conv(c, in), expected, 1e-4f, 1e-4f, "strided");
  }
}

// bf16 activations with f32 weights would be computed in f32 from bf16: declined, as conv_opt declines it.
TEST_F(ConvSmall, DeclinesBf16ActivationsWithF32WeightsAndF16) {
  const Case c = cases()[0];
  std::vector<Tensor> in = inputs_of(c, DType::BF16, DType::F32, 7);
  Tensor out = output_for(OpKind::Conv, c.attrs, in);
  EXPECT_FALSE(cpu::opt::small_conv_supports(c.attrs, in, out));
  in = inputs_of(c, DType::F16, DType::F16, 8);
  out = output_for(OpKind::Conv, c.attrs, in);
  EXPECT_FALSE(cpu::opt::small_conv_supports(c.attrs, in, out));
}

// The rule: the embedded default model's small convs come here through try_conv (the same bits as the kernel
// called directly); a VAE-sized call stays on oneDNN.
TEST_F(ConvSmall, TryConvSendsSmallCallsHereAndLargeOnesToOneDnn) {
  const Case c = cases()[8];
  const std::vector<Tensor> in = inputs_of(c, DType::F32, DType::BF16, 9);
  Tensor out = output_for(OpKind::Conv, c.attrs, in);
  EXPECT_TRUE(cpu::opt::small_conv_applies(c.attrs, in, out));
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::Conv, c.attrs, in, out));
  expect_close(out, small_conv(c, in), 0.0f, 0.0f);

  const ConvAttrs big = conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1);
  const std::vector<Tensor> large{Tensor::empty(DType::F32, Shape{1, 128, 4, 32, 48}),
                                  Tensor::empty(DType::BF16, Shape{128, 128, 3, 3, 3})};
  const Tensor large_out = output_for(OpKind::Conv, big, large);
  EXPECT_TRUE(cpu::opt::small_conv_supports(big, large, large_out));
  EXPECT_FALSE(cpu::opt::small_conv_applies(big, large, large_out));
}

// Prepared weights: a slot is filled on the first run and reused bit for bit; other weights in the same slot are
// packed again (never the stale ones).
TEST_F(ConvSmall, PreparedWeightsAreReusedAndRebuiltForOtherWeights) {
  const Case c = cases()[3];
  const std::vector<Tensor> in = inputs_of(c, DType::F32, DType::BF16, 11);
  PreparedSlot slot;
  Tensor first = output_for(OpKind::Conv, c.attrs, in), second = output_for(OpKind::Conv, c.attrs, in);
  cpu::opt::run_small_conv(c.attrs, in, first, &slot);
  ASSERT_NE(slot, nullptr);
  const PreparedWeights* kept = slot.get();
  cpu::opt::run_small_conv(c.attrs, in, second, &slot);
  EXPECT_EQ(slot.get(), kept);
  expect_close(second, first, 0.0f, 0.0f);

  std::vector<Tensor> other = in;
  other[1] = random_tensor(DType::BF16, c.w, 12);
  Tensor third = output_for(OpKind::Conv, c.attrs, other);
  cpu::opt::run_small_conv(c.attrs, other, third, &slot);
  EXPECT_NE(slot.get(), kept);
  expect_close(third, reference_on_rounded_x(c, other), 0.0f, 0.0f);
}

}  // namespace
}  // namespace ltx::test
