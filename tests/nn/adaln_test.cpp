#include "nn/adaln.h"

#include <gtest/gtest.h>

#include <cmath>

#include "graph/compile.h"

namespace ltx {
namespace {

Tensor pseudo_random(const Shape& s, uint32_t seed, float amplitude) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = amplitude * (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f);
  }
  return Tensor::from_floats(DType::F32, s, v);
}

nn::Linear linear(const std::string& name, int64_t in, int64_t out, uint32_t seed) {
  const float a = 2.0f / std::sqrt(static_cast<float>(in));
  return {name, pseudo_random({out, in}, seed, a), pseudo_random({out}, seed + 1, a)};
}

TEST(DistinctRows, KeepsFirstAppearanceOrderAndSeparatesSignedZeros) {
  const std::vector<float> t{0.5f, 0.0f, 0.5f, -0.0f, 0.25f, 0.0f};
  const nn::DistinctRows d = nn::distinct_rows(t);
  ASSERT_EQ(d.values.size(), 4u);
  EXPECT_EQ(d.values[0], 0.5f);
  EXPECT_FALSE(std::signbit(d.values[1]));
  EXPECT_TRUE(std::signbit(d.values[2]));
  EXPECT_EQ(d.values[3], 0.25f);
  EXPECT_EQ(d.ids, (std::vector<int64_t>{0, 1, 0, 2, 3, 1}));
}

// The gathered AdaLN equals the AdaLN of every row: the MLP of a value does not depend on the other rows. Sizes
// put the per-row matmuls (M = 301) and the per-value ones (M = 3) on different kernel paths.
TEST(AdaLayerNormSingle, PerDistinctTimestepEqualsPerRow) {
  const int64_t dim = 96, coef = 6, n = 301;
  nn::AdaLayerNormSingle a;
  a.name = "adaln_single";
  a.dim = dim;
  a.coef = coef;
  a.emb = {linear("emb.linear_1", nn::kTimestepSinusoidDim, dim, 1), linear("emb.linear_2", dim, dim, 3)};
  a.linear = linear("linear", dim, coef * dim, 5);

  std::vector<float> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = i % 7 == 0 ? 0.0f : (i < 150 ? 912.5f : 437.25f);
  const nn::DistinctRows d = nn::distinct_rows(t);
  ASSERT_EQ(d.values.size(), 3u);

  Graph full;
  const auto f = a(full.input("sinusoid", DType::F32, {n, nn::kTimestepSinusoidDim}));
  full.output(f.modulation, "modulation");
  full.output(f.embedded_timestep, "embedded_timestep");
  const auto full_plan = compile(full, cpu_backend());
  const auto want = full_plan->run({nn::timestep_sinusoid(t, nn::kTimestepSinusoidDim)});

  Graph few;
  const auto u = static_cast<int64_t>(d.values.size());
  const Value sinusoid = few.input("sinusoid", DType::F32, {u, nn::kTimestepSinusoidDim});
  const auto o = a(sinusoid, few.input("ids", DType::I32, {n}));
  few.output(o.modulation, "modulation");
  few.output(o.embedded_timestep, "embedded_timestep");
  const auto few_plan = compile(few, cpu_backend());
  const auto got = few_plan->run(
      {nn::timestep_sinusoid(d.values, nn::kTimestepSinusoidDim), Tensor::from_ints(DType::I32, {n}, d.ids)});

  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape());
    const auto g = got[k].to_floats(), w = want[k].to_floats();
    float max_err = 0.0f;
    for (size_t i = 0; i < g.size(); ++i) max_err = std::max(max_err, std::abs(g[i] - w[i]) / (1.0f + std::abs(w[i])));
    EXPECT_LE(max_err, 1e-6f) << "output " << k;  // f32 rounding from a different summation order at most
  }
}

}  // namespace
}  // namespace ltx
