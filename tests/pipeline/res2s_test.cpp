// The res_2s arithmetic (pipeline/res2s.h) against values worked out from the reference formulas
// (ltx_pipelines/utils/res2s.py, samplers.py _get_new_noise, ltx_core diffusion_steps.py Res2sDiffusionStep);
// the golden case pipeline/two_stage_hq checks the whole loop against the reference itself.
#include "pipeline/res2s.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace ltx {
namespace {

TEST(Res2s, PhiFunctionsMatchClosedForms) {
  const double z = -0.7;
  EXPECT_DOUBLE_EQ(res2s_phi(1, z), (std::exp(z) - 1.0) / z);
  EXPECT_NEAR(res2s_phi(2, z), (std::exp(z) - 1.0 - z) / (z * z), 1e-15);
  EXPECT_DOUBLE_EQ(res2s_phi(1, 0.0), 1.0);  // 1/j! at z = 0
  EXPECT_DOUBLE_EQ(res2s_phi(2, 1e-12), 0.5);
}

TEST(Res2s, CoefficientsTendToTheMidpointRuleForSmallSteps) {
  // h -> 0: a21 = c2·φ1(0) = 0.5, b2 = φ2(0)/c2 = 1, b1 = φ1(0) - b2 = 0.
  const Res2sCoefficients c = res2s_coefficients(1e-12);
  EXPECT_DOUBLE_EQ(c.a21, 0.5);
  EXPECT_DOUBLE_EQ(c.b2, 1.0);
  EXPECT_DOUBLE_EQ(c.b1, 0.0);
  const double h = 0.4;
  const Res2sCoefficients d = res2s_coefficients(h);
  EXPECT_DOUBLE_EQ(d.a21, 0.5 * (std::exp(-0.2) - 1.0) / -0.2);
  EXPECT_NEAR(d.b1 + d.b2, (std::exp(-h) - 1.0) / -h, 1e-15);  // b1 + b2 = φ1(-h)
}

TEST(Res2s, SdeStepMixesTheDeterministicUpdateWithNoise) {
  // σ 0.8 -> 0.5 in double: σ_up = 0.25, residual = sqrt(0.25 - 0.0625), alpha = 0.5 + residual,
  // σ_down = residual/alpha; eps = (x - t)/(σ - σ_next), x_next = alpha·(x - σ·eps + σ_down·eps) + σ_up·n.
  const std::vector<double> sample{1.0, -2.0}, noise{0.5, -1.0};
  std::vector<double> target{0.4, 0.1};
  const std::vector<double> before = target;
  res2s_sde_step(sample, target, noise, 0.8, 0.5, false);
  const double residual = std::sqrt(0.25 - 0.0625), alpha = 0.5 + residual, down = residual / alpha;
  for (size_t i = 0; i < 2; ++i) {
    const double eps = (sample[i] - before[i]) / (0.8 - 0.5);
    EXPECT_DOUBLE_EQ(target[i], alpha * ((sample[i] - 0.8 * eps) + down * eps) + 0.25 * noise[i]) << i;
  }
  std::vector<double> last = before;
  res2s_sde_step(sample, last, noise, 0.5, 0.0, true);  // σ_next 0: the target as it is
  EXPECT_EQ(last, before);
}

TEST(Res2s, NoiseIsStandardizedPerItem) {
  TorchGenerator generator(~0ull);
  const int64_t per_item = 96 * 128;
  const std::vector<double> n = res2s_noise(generator, 2, per_item);
  for (int64_t b = 0; b < 2; ++b) {
    const double* x = n.data() + b * per_item;
    const double mean = std::accumulate(x, x + per_item, 0.0) / per_item;
    double squares = 0.0;
    for (int64_t i = 0; i < per_item; ++i) squares += (x[i] - mean) * (x[i] - mean);
    EXPECT_NEAR(mean, 0.0, 1e-12) << b;
    EXPECT_NEAR(std::sqrt(squares / (per_item - 1)), 1.0, 1e-12) << b;
  }
}

}  // namespace
}  // namespace ltx
