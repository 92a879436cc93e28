// The stand-in values: deterministic per seed, computable chunk by chunk, and scaled by the documented rule.
#include "synth/values.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

namespace ltx::synth {
namespace {

std::vector<float> fill(const ValueGenerator& g, const TensorSpec& t, int64_t first, int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  g.fill(t, first, count, v.data());
  return v;
}

const TensorSpec kLinear{"model.diffusion_model.transformer_blocks.3.attn1.to_q.weight", Shape{512, 384}, DType::BF16};

TEST(SynthValues, SameSeedSameValuesOtherSeedOrNameOthers) {
  const ValueGenerator a(7, false), b(7, false), c(8, false);
  const auto va = fill(a, kLinear, 0, 4096);
  EXPECT_EQ(va, fill(b, kLinear, 0, 4096));
  const auto vc = fill(c, kLinear, 0, 4096);
  int same = 0;
  for (size_t i = 0; i < va.size(); ++i) same += va[i] == vc[i];
  EXPECT_LT(same, 8);
  TensorSpec other = kLinear;
  other.name = "model.diffusion_model.transformer_blocks.3.attn1.to_k.weight";
  const auto vo = fill(a, other, 0, 4096);
  same = 0;
  for (size_t i = 0; i < va.size(); ++i) same += va[i] == vo[i];
  EXPECT_LT(same, 8);
}

TEST(SynthValues, AnyChunkEqualsTheSliceOfTheWhole) {
  const ValueGenerator g(3, false);
  const int64_t n = kLinear.shape.numel();
  const auto whole = fill(g, kLinear, 0, n);
  for (const auto& [first, count] : {std::pair<int64_t, int64_t>{0, 1}, {1, 999}, {12345, 4096}, {n - 17, 17}}) {
    const auto part = fill(g, kLinear, first, count);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(part[static_cast<size_t>(i)], whole[static_cast<size_t>(first + i)]) << first << "+" << i;
  }
}

double variance(const std::vector<float>& v, double mean) {
  double s = 0;
  for (float x : v) s += (x - mean) * (x - mean);
  return s / static_cast<double>(v.size());
}

double mean(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}

TEST(SynthValues, LinearAndConvWeightsHaveVarianceOneOverFanIn) {
  const ValueGenerator g(0, false);
  for (const TensorSpec& t : {kLinear, TensorSpec{"vae.decoder.conv_in.conv.weight", Shape{64, 128, 3, 3, 3}},
                              TensorSpec{"language_model.model.embed_tokens.weight", Shape{1000, 3840}}}) {
    SCOPED_TRACE(t.name);
    const auto v = fill(g, t, 0, t.shape.numel());
    const double fan_in = static_cast<double>(t.shape.numel() / t.shape[0]);
    EXPECT_NEAR(variance(v, 0.0) * fan_in, 1.0, 0.1);
    EXPECT_NEAR(mean(v), 0.0, 4.0 / std::sqrt(fan_in * static_cast<double>(v.size())));
  }
}

TEST(SynthValues, TheOtherRules) {
  const ValueGenerator g(0, false);
  const auto range = [&](const TensorSpec& t) {
    const auto v = fill(g, t, 0, t.shape.numel());
    return std::pair(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
  };
  // LTX norms scale by w: around 1. Gemma's RMSNorm scales by 1 + w: around 0. SigLIP's LayerNorm: around 1.
  auto [lo, hi] = range({"model.diffusion_model.transformer_blocks.0.attn1.q_norm.weight", Shape{4096}});
  EXPECT_GE(lo, 0.98f);
  EXPECT_LE(hi, 1.02f);
  std::tie(lo, hi) = range({"language_model.model.layers.0.input_layernorm.weight", Shape{3840}});
  EXPECT_GE(lo, -0.02f);
  EXPECT_LE(hi, 0.02f);
  EXPECT_LT(lo, -0.015f);
  std::tie(lo, hi) = range({"vision_tower.vision_model.encoder.layers.0.layer_norm1.weight", Shape{1152}});
  EXPECT_GE(lo, 0.98f);
  std::tie(lo, hi) = range({"model.diffusion_model.transformer_blocks.0.scale_shift_table", Shape{9, 4096}});
  EXPECT_GE(lo, -0.1f);
  EXPECT_LE(hi, 0.1f);
  EXPECT_GT(hi, 0.09f);
  std::tie(lo, hi) = range({"vae.per_channel_statistics.std-of-means", Shape{128}});
  EXPECT_GE(lo, 1.0f);
  EXPECT_LE(hi, 1.1f);
  std::tie(lo, hi) = range({"model.diffusion_model.patchify_proj.bias", Shape{4096}});
  EXPECT_GE(lo, -0.02f);
  EXPECT_LE(hi, 0.02f);
  EXPECT_GT(hi, 0.015f);
  // LoRA: B·A adds a tenth of a weight's standard deviation.
  const TensorSpec lora_b{"diffusion_model.transformer_blocks.0.attn1.to_q.lora_B.weight", Shape{4096, 384}};
  EXPECT_NEAR(variance(fill(g, lora_b, 0, lora_b.shape.numel()), 0.0) * 384.0, 0.01, 0.001);
}

TEST(SynthValues, ZerosModeIsZeros) {
  const ValueGenerator g(5, true);
  EXPECT_TRUE(g.zeros());
  for (float v : fill(g, {"vae.per_channel_statistics.std-of-means", Shape{128}}, 0, 128)) EXPECT_EQ(v, 0.0f);
}

TEST(SynthValues, MaxAbsBoundsEveryValue) {
  const ValueGenerator g(11, false);
  const float bound = value_rule(kLinear).max_abs();
  const auto v = fill(g, kLinear, 0, kLinear.shape.numel());
  float largest = 0;
  for (float x : v) largest = std::max(largest, std::fabs(x));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, 0.999f * bound);
}

}  // namespace
}  // namespace ltx::synth
