// AntiAliasSnakeBeta (BigVGAN-v2's Activation1d with SnakeBeta, ltx_core/model/audio_vae/vocoder.py):
// - the reference kernel (resample_ref.cpp) against the op-by-op graph the reference module runs (replicate pad,
//   depthwise conv_transpose1d stride 2, ×2, crop, SnakeBeta, replicate pad, depthwise conv stride 2), each op on
//   its own reference kernel: the same f32 arithmetic except the order of the transposed conv's sums, so within a
//   few ulp of the output's scale;
// - the AVX-512 kernel (anti_alias_avx512.cpp) against the reference kernel: FMA sums and vec::sin, so again a
//   few ulp of the output's scale, f32 and bf16 in and out, rows as short as one sample;
// - vec::sin / vec::cos against double-precision sin/cos over a wide range, in ulp of the result;
// - shape inference rejects filters of odd length.
#include <cmath>
#include <limits>

#include "backend/cpu/resample/anti_alias_opt.h"
#include "core/error.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::AntiAliasSnakeBeta);

// The two BigVGAN Kaiser-sinc filters are symmetric 12-tap low-passes; random ones exercise every tap index.
std::vector<Tensor> inputs(DType dt, int64_t b, int64_t c, int64_t l, int64_t ku, int64_t kd, uint32_t seed) {
  return {random_tensor(dt, {b, c, l}, seed, -2.0f, 2.0f), random_tensor(DType::F32, {c}, seed + 1, -0.5f, 1.0f),
          random_tensor(DType::F32, {c}, seed + 2, -0.5f, 1.0f), random_tensor(DType::F32, {1, 1, ku}, seed + 3),
          random_tensor(DType::F32, {1, 1, kd}, seed + 4)};
}

// vocoder.py Activation1d.forward as separate ops (f32), each on its reference kernel.
Tensor op_by_op(const std::vector<Tensor>& in) {
  const int64_t c = in[0].dim(1), ku = in[3].numel(), kd = in[4].numel();
  const int64_t pad = ku / 2 - 1, crop_l = 2 * pad + (ku - 2) / 2, crop_r = 2 * pad + (ku - 1) / 2;
  const auto per_channel = [&](const Tensor& f) {
    std::vector<float> v;
    const auto taps = f.to_floats();
    for (int64_t i = 0; i < c; ++i) v.insert(v.end(), taps.begin(), taps.end());
    return Tensor::from_floats(DType::F32, {c, 1, f.numel()}, v);
  };
  PadAttrs p;
  p.before[2] = pad;
  p.after[2] = pad;
  p.mode = PadMode::Replicate;
  Tensor x = run_reference(OpKind::Pad, p, {in[0].to(DType::F32)});
  ConvAttrs up;
  up.spatial = 1;
  up.stride = {2, 1, 1};
  up.groups = c;
  x = run_reference(OpKind::ConvTranspose1d, up, {x, per_channel(in[3])});
  x = run_reference(OpKind::Scale, ScaleAttrs{2.0f, 0.0f}, {x});
  x = run_reference(OpKind::Slice, SliceAttrs{2, crop_l, x.dim(2) - crop_r, 1}, {x});
  x = run_reference(OpKind::SnakeBeta, SnakeAttrs{true}, {x, in[1], in[2]});
  ConvAttrs down = conv_attrs(1, {2}, {1}, {kd / 2 - 1}, {kd / 2}, {PadMode::Replicate}, c);
  return run_reference(OpKind::Conv, down, {x, per_channel(in[4])});
}

double scale_of(const Tensor& t) {
  double s = 0;
  for (float v : t.to_floats()) s = std::max(s, static_cast<double>(std::abs(v)));
  return s;
}

TEST(AntiAliasSnakeBeta, ReferenceMatchesTheModulesOps) {
  for (const auto& [l, ku, kd] : std::vector<std::array<int64_t, 3>>{{37, 12, 12}, {1, 12, 12}, {5, 8, 4}}) {
    const auto in = inputs(DType::F32, 2, 3, l, ku, kd, static_cast<uint32_t>(10 + l));
    const Tensor got = run_reference(OpKind::AntiAliasSnakeBeta, SnakeAttrs{true}, in);
    const Tensor want = op_by_op(in);
    const auto s = static_cast<float>(scale_of(want));
    expect_close(got, want, 4e-7f * s, 0.0f, ("L " + std::to_string(l)).c_str());
  }
}

TEST(AntiAliasSnakeBeta, OptimizedMatchesReference) {
  for (DType in_dt : {DType::F32, DType::BF16})
    for (DType out_dt : {DType::F32, DType::BF16})
      for (const auto& [l, ku, kd] :
           std::vector<std::array<int64_t, 3>>{{37, 12, 12}, {1, 12, 12}, {2, 12, 12}, {50, 8, 4}, {300, 12, 12}}) {
        const auto in = inputs(in_dt, 2, 5, l, ku, kd, static_cast<uint32_t>(100 + l));
        Tensor want = Tensor::empty(out_dt, in[0].shape()), got = Tensor::empty(out_dt, in[0].shape());
        cpu::run_reference(OpKind::AntiAliasSnakeBeta, SnakeAttrs{true}, in, want);
        if (!cpu::opt::try_anti_alias_snake_beta(SnakeAttrs{true}, in, got))
          GTEST_SKIP() << "this CPU lacks AVX-512; the optimized kernel declines";
        // f32: a few ulp of the scale; bf16 out: one bf16 rounding flip (2^-8 relative) on top.
        const auto s = static_cast<float>(scale_of(want));
        const std::string what =
            std::string(dtype_name(in_dt)) + "->" + std::string(dtype_name(out_dt)) + " L " + std::to_string(l);
        expect_close(got, want, 1e-6f * s, out_dt == DType::BF16 ? 8e-3f : 0.0f, what.c_str());
      }
}

TEST(AntiAliasSnakeBeta, DispatchTakesTheOptimizedKernel) {
  const auto in = inputs(DType::F32, 1, 4, 33, 12, 12, 7);
  const Tensor want = run_reference(OpKind::AntiAliasSnakeBeta, SnakeAttrs{false}, in);
  expect_close(run_dispatched(OpKind::AntiAliasSnakeBeta, SnakeAttrs{false}, in), want,
               1e-6f * static_cast<float>(scale_of(want)), 0.0f);
}

TEST(AntiAliasSnakeBeta, RejectsOddFilters) {
  auto in = inputs(DType::F32, 1, 2, 8, 12, 11, 3);
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  try {
    infer_output(OpKind::AntiAliasSnakeBeta, SnakeAttrs{true}, metas);
    FAIL() << "an 11-tap down filter was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("even number of taps"), std::string::npos) << e.what();
  }
}

// ulp distance of f from the correctly rounded double value r.
double ulp_error(float f, double r) {
  const float rf = static_cast<float>(r);
  const double ulp = std::nextafter(std::abs(rf), std::numeric_limits<float>::infinity()) - std::abs(rf);
  return std::abs(static_cast<double>(f) - r) / (ulp > 0 ? ulp : std::numeric_limits<float>::denorm_min());
}

TEST(VecSin, WithinFourUlpOverAWideRange) {
  std::vector<float> x;
  for (float hi : {1.0f, 10.0f, 1e3f, 1e5f, 4e6f}) {
    const auto v = random_values(20000, static_cast<uint32_t>(hi), -hi, hi);
    x.insert(x.end(), v.begin(), v.end());
  }
  for (int k = -2000; k <= 2000; ++k) x.push_back(static_cast<float>(k * M_PI / 2));  // near zeros and extrema
  x.push_back(0.0f);
  x.push_back(-0.0f);
  x.push_back(1e-30f);
  x.push_back(1e7f);  // past 2^22: the scalar fallback
  std::vector<float> s(x.size()), c(x.size());
  if (!cpu::opt::vec_sin_for_testing(x.data(), s.data(), static_cast<int64_t>(x.size())) ||
      !cpu::opt::vec_cos_for_testing(x.data(), c.data(), static_cast<int64_t>(x.size())))
    GTEST_SKIP() << "this CPU lacks AVX-512";
  double worst_sin = 0, worst_cos = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst_sin = std::max(worst_sin, ulp_error(s[i], std::sin(static_cast<double>(x[i]))));
    worst_cos = std::max(worst_cos, ulp_error(c[i], std::cos(static_cast<double>(x[i]))));
  }
  RecordProperty("worst_sin_ulp", std::to_string(worst_sin));
  RecordProperty("worst_cos_ulp", std::to_string(worst_cos));
  std::printf("vec::sin worst %.2f ulp, vec::cos worst %.2f ulp over %zu arguments\n", worst_sin, worst_cos, x.size());
  EXPECT_LE(worst_sin, 4.0);
  EXPECT_LE(worst_cos, 4.0);
  float nan_in[16], nan_out[16];
  for (float& v : nan_in) v = std::numeric_limits<float>::quiet_NaN();
  nan_in[1] = std::numeric_limits<float>::infinity();
  cpu::opt::vec_sin_for_testing(nan_in, nan_out, 16);
  for (float v : nan_out) EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace ltx::test
