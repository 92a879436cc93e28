// opt::try_conv (conv_opt.cpp) against the reference kernel (conv_ref.cpp), each path forced in turn (oneDNN on
// channels-last slabs, oneDNN on whole tensors, im2col over our GEMM) and through the dispatcher: 1-D, 2-D, 3-D,
// strides, dilation, groups (depthwise too), every pad mode, LTX's causal temporal padding (replicate k-1 frames
// before), bias, strided inputs, f32 and bf16.
//
// Tolerances. f32: the same f32 products summed in another order (blocked GEMM, oneDNN's brgconv) over at most
// C/G·taps = 432 terms of |x·w| <= 1: a few ulps of the sum's magnitude, 1e-4 + 1e-4·|ref|.
// bf16: products of bf16 inputs are exact in f32 and sums are f32 in every kernel, so the only difference is the
// final rounding to bf16, which can flip one ulp (2^-8·|y|) when the f32 sums straddle a rounding boundary:
// 1e-2 + 8e-3·|ref|.
#include "backend/cpu/conv/conv_opt.h"

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Conv);

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
      {"1d plain", {2, 5, 37}, {7, 5, 3}, conv_attrs(1, {1}, {1}, {1}, {1}, {Z}, 1), true},
      {"1d stride dilation reflect", {1, 6, 41}, {4, 6, 5}, conv_attrs(1, {2}, {3}, {4}, {3}, {R}, 1), false},
      {"1d groups replicate", {2, 8, 29}, {12, 2, 3}, conv_attrs(1, {1}, {1}, {2}, {0}, {P}, 4), true},
      {"1d depthwise", {1, 6, 33}, {6, 1, 7}, conv_attrs(1, {1}, {1}, {3}, {3}, {Z}, 6), true},
      {"2d plain", {1, 3, 13, 17}, {5, 3, 3, 3}, conv_attrs(2, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {Z, Z}, 1), true},
      {"2d stride 2 reflect",
       {2, 4, 15, 12},
       {6, 4, 3, 3},
       conv_attrs(2, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {R, R}, 1),
       false},
      {"2d dilation asymmetric pads",
       {1, 5, 14, 19},
       {3, 5, 3, 2},
       conv_attrs(2, {1, 2}, {2, 3}, {2, 0}, {1, 3}, {Z, Z}, 1),
       true},
      {"2d groups mixed modes",
       {1, 6, 11, 9},
       {9, 2, 3, 3},
       conv_attrs(2, {1, 1}, {1, 1}, {1, 2}, {1, 1}, {P, R}, 3),
       true},
      {"2d 1x1", {2, 16, 7, 5}, {24, 16, 1, 1}, conv_attrs(2, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {Z, Z}, 1), true},
      // LTX's CausalConv3d: replicate k-1 frames before in time, zeros (or reflection) in space.
      {"3d causal zeros",
       {1, 8, 5, 9, 11},
       {12, 8, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1),
       true},
      {"3d causal reflect",
       {1, 16, 4, 7, 6},
       {16, 16, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, R, R}, 1),
       true},
      {"3d stride groups dilation",
       {2, 8, 7, 9, 10},
       {8, 4, 3, 3, 2},
       conv_attrs(3, {2, 1, 2}, {1, 2, 1}, {1, 2, 0}, {1, 2, 1}, {Z, Z, Z}, 2),
       false},
      {"3d wide channels",
       {1, 64, 3, 6, 7},
       {48, 64, 3, 3, 3},
       conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1),
       true},
  };
}

// The same values stored every other element along the last axis (a non-contiguous view whatever the shape).
Tensor every_other(const Tensor& t) {
  Shape wide = t.shape();
  wide[wide.rank() - 1] *= 2;
  Tensor view = Tensor::empty(t.dtype(), wide).slice(-1, 0, wide[wide.rank() - 1], 2);
  view.copy_from(t);
  EXPECT_FALSE(view.is_contiguous());
  return view;
}

std::vector<Tensor> inputs_of(const Case& c, DType dt, uint32_t seed) {
  std::vector<Tensor> in{random_tensor(dt, c.x, seed), random_tensor(dt, c.w, seed + 1)};
  if (c.bias) in.push_back(random_tensor(DType::F32, Shape{c.w[0]}, seed + 2));
  return in;
}

class ConvOpt : public ::testing::TestWithParam<cpu::opt::ConvPath> {
 protected:
  void SetUp() override {
    if (GetParam() == cpu::opt::ConvPath::Im2col && !cpu::gemm::avx512_available())
      GTEST_SKIP() << "this CPU lacks AVX-512 with BF16; the im2col path declines";
  }
  void check(const Case& c, const std::vector<Tensor>& in, const char* what) {
    const Tensor expected = run_reference(OpKind::Conv, c.attrs, in);
    Tensor out = output_for(OpKind::Conv, c.attrs, in);
    ASSERT_TRUE(cpu::opt::conv_with_path(GetParam(), OpKind::Conv, c.attrs, in, out)) << what;
    const bool bf16 = in[0].dtype() == DType::BF16;
    expect_close(out, expected, bf16 ? 1e-2f : 1e-4f, bf16 ? 8e-3f : 1e-4f, what);
  }
};

TEST_P(ConvOpt, MatchesReferenceF32) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> in = inputs_of(c, DType::F32, seed += 5);
    check(c, in, "contiguous");
    std::vector<Tensor> strided = in;
    strided[0] = non_contiguous(in[0]);
    strided[1] = every_other(in[1]);
    check(c, strided, "non-contiguous x and w");
    strided[0] = every_other(in[0]);
    check(c, strided, "x strided along its last axis");
  }
}

TEST_P(ConvOpt, MatchesReferenceBF16) {
  uint32_t seed = 100;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = inputs_of(c, DType::BF16, seed += 5);
    check(c, in, "contiguous");
    if (c.bias) {
      in[2] = in[2].to(DType::BF16);
      check(c, in, "bf16 bias");
    }
    in[0] = non_contiguous(in[0]);
    check(c, in, "non-contiguous x");
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, ConvOpt,
                         ::testing::Values(cpu::opt::ConvPath::OneDnn, cpu::opt::ConvPath::OneDnnWhole,
                                           cpu::opt::ConvPath::Im2col, cpu::opt::ConvPath::Auto),
                         [](const auto& info) {
                           switch (info.param) {
                             case cpu::opt::ConvPath::OneDnn:
                               return std::string("OneDnn");
                             case cpu::opt::ConvPath::OneDnnWhole:
                               return std::string("OneDnnWhole");
                             case cpu::opt::ConvPath::Im2col:
                               return std::string("Im2col");
                             default:
                               return std::string("Auto");
                           }
                         });

// The dispatcher routes Conv to the optimized kernel and still agrees with the reference; f16 is declined (the
// reference runs it).
TEST(ConvOptDispatch, RunMatchesReferenceAndDeclinesWhatItDoesNotHandle) {
  const Case c = cases()[9];
  const std::vector<Tensor> in = inputs_of(c, DType::F32, 42);
  expect_close(run_dispatched(OpKind::Conv, c.attrs, in), run_reference(OpKind::Conv, c.attrs, in), 1e-4f, 1e-4f);

  std::vector<Tensor> f16 = inputs_of(c, DType::F16, 43);
  Tensor out16 = output_for(OpKind::Conv, c.attrs, f16);
  EXPECT_FALSE(cpu::opt::try_conv(OpKind::Conv, c.attrs, f16, out16));
}

// f32 activations with bf16 weights (production): computed in bf16 with f32 accumulation, so equal to the reference
// on the activations rounded to bf16, within the f32 tolerance (exact products, sums in another order).
TEST(ConvOptDispatch, F32ActivationsWithBf16WeightsRoundTheActivationsOnce) {
  for (const size_t i : {size_t{0}, size_t{4}, size_t{9}}) {
    const Case c = cases()[i];
    SCOPED_TRACE(c.name);
    std::vector<Tensor> mixed = inputs_of(c, DType::F32, 44);
    mixed[1] = mixed[1].to(DType::BF16);
    Tensor out = output_for(OpKind::Conv, c.attrs, mixed);
    ASSERT_TRUE(cpu::opt::try_conv(OpKind::Conv, c.attrs, mixed, out));
    std::vector<Tensor> rounded = mixed;
    rounded[0] = mixed[0].to(DType::BF16).to(DType::F32);
    expect_close(out, run_reference(OpKind::Conv, c.attrs, rounded), 1e-4f, 1e-4f);
  }
}

// ConvTranspose1d: dense (oneDNN deconvolution; the vocoders' upsampling) and depthwise (the anti-aliased
// resampler), with padding, output padding, bias, f32 and f32 x bf16 weights.
TEST(ConvOptDispatch, ConvTranspose1dMatchesReference) {
  ConvAttrs t;
  t.spatial = 1;
  t.stride = {3, 1, 1};
  t.pad_before = {2, 0, 0};
  t.output_padding = 1;
  const std::vector<Tensor> dense{random_tensor(DType::F32, Shape{2, 6, 11}, 5),
                                  random_tensor(DType::F32, Shape{6, 5, 7}, 6), random_tensor(DType::F32, Shape{5}, 7)};
  Tensor out = output_for(OpKind::ConvTranspose1d, t, dense);
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::ConvTranspose1d, t, dense, out));
  expect_close(out, run_reference(OpKind::ConvTranspose1d, t, dense), 1e-4f, 1e-4f);

  std::vector<Tensor> mixed = dense;
  mixed[1] = dense[1].to(DType::BF16);
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::ConvTranspose1d, t, mixed, out));
  std::vector<Tensor> rounded = mixed;
  rounded[0] = mixed[0].to(DType::BF16).to(DType::F32);
  expect_close(out, run_reference(OpKind::ConvTranspose1d, t, rounded), 1e-4f, 1e-4f);

  ConvAttrs d;
  d.spatial = 1;
  d.stride = {2, 1, 1};
  d.groups = 4;
  const std::vector<Tensor> depthwise{random_tensor(DType::BF16, Shape{1, 4, 19}, 8),
                                      random_tensor(DType::F32, Shape{4, 1, 12}, 9)};
  Tensor dout = output_for(OpKind::ConvTranspose1d, d, depthwise);
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::ConvTranspose1d, d, depthwise, dout));
  expect_close(dout, run_reference(OpKind::ConvTranspose1d, d, depthwise), 1e-2f, 8e-3f);
}

// Prepared weights: the first run with a slot fills it, later runs reuse it bit for bit, and weights of another
// identity in the same slot are prepared again (never the stale ones).
TEST(ConvOptDispatch, PreparedWeightsAreReusedAndRebuiltForOtherWeights) {
  const Case c = cases()[9];
  std::vector<Tensor> in = inputs_of(c, DType::BF16, 45);
  PreparedSlot slot;
  Tensor first = output_for(OpKind::Conv, c.attrs, in), second = output_for(OpKind::Conv, c.attrs, in);
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::Conv, c.attrs, in, first, &slot));
  ASSERT_NE(slot, nullptr);
  const PreparedWeights* kept = slot.get();
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::Conv, c.attrs, in, second, &slot));
  EXPECT_EQ(slot.get(), kept);
  expect_close(second, first, 0.0f, 0.0f);
  expect_close(first, run_reference(OpKind::Conv, c.attrs, in), 1e-2f, 8e-3f);

  std::vector<Tensor> other = in;
  other[1] = inputs_of(c, DType::BF16, 46)[1];
  Tensor third = output_for(OpKind::Conv, c.attrs, other);
  ASSERT_TRUE(cpu::opt::try_conv(OpKind::Conv, c.attrs, other, third, &slot));
  EXPECT_NE(slot.get(), kept);
  expect_close(third, run_reference(OpKind::Conv, c.attrs, other), 1e-2f, 8e-3f);
}

}  // namespace
}  // namespace ltx::test
