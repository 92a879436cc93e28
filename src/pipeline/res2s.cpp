#include "pipeline/res2s.h"

#include <cmath>

#include "core/error.h"

namespace ltx {
namespace {

double factorial(int k) {
  double f = 1.0;
  for (int i = 2; i <= k; ++i) f *= i;
  return f;
}

// x.sub_(mean).div_(std) over [begin, end), std with Bessel's correction (torch.std's default).
void standardize(double* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(n);
  double squares = 0.0;
  for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  const double std = std::sqrt(squares / static_cast<double>(n - 1));
  for (int64_t i = 0; i < n; ++i) x[i] = (x[i] - mean) / std;
}

}  // namespace

double res2s_phi(int j, double neg_h) {
  if (std::abs(neg_h) < 1e-10) return 1.0 / factorial(j);
  double remainder = 0.0;  // Python's sum() starts from the int 0
  for (int k = 0; k < j; ++k) remainder += std::pow(neg_h, k) / factorial(k);
  return (std::exp(neg_h) - remainder) / std::pow(neg_h, j);
}

Res2sCoefficients res2s_coefficients(double h, double c2) {
  Res2sCoefficients c;
  c.a21 = c2 * res2s_phi(1, -h * c2);
  c.b2 = res2s_phi(2, -h) / c2;
  c.b1 = res2s_phi(1, -h) - c.b2;
  return c;
}

void res2s_sde_step(std::span<const double> sample, std::span<double> target, std::span<const double> noise,
                    double sigma, double sigma_next, bool sigma_in_f32) {
  LTX_CHECK(sample.size() == target.size() && noise.size() == target.size(), "pipeline",
            "res_2s step: sample, target and noise sizes ", sample.size(), ", ", target.size(), ", ", noise.size());
  // get_sde_coeff(sigma_next, sigma_up=sigma_next*0.5) with sigma_max 1, evaluated in the sigmas' dtype.
  double alpha_ratio, sigma_down, sigma_up, step;
  if (sigma_in_f32) {
    const float sn = static_cast<float>(sigma_next), up = sn * 0.5f;
    const float residual = std::sqrt(std::max(sn * sn - up * up, 0.0f));
    const float alpha = (1.0f - sn) + residual;
    alpha_ratio = alpha, sigma_down = residual / alpha, sigma_up = up;
    step = static_cast<float>(sigma) - sn;
  } else {
    const double up = sigma_next * 0.5;
    const double residual = std::sqrt(std::max(sigma_next * sigma_next - up * up, 0.0));
    alpha_ratio = (1.0 - sigma_next) + residual;
    sigma_down = residual / alpha_ratio, sigma_up = up;
    step = sigma - sigma_next;
  }
  if (sigma_up == 0.0 || sigma_next == 0.0) return;
  for (size_t i = 0; i < target.size(); ++i) {
    const double eps = (sample[i] - target[i]) / step;
    const double denoised = sample[i] - sigma * eps;
    target[i] = alpha_ratio * (denoised + sigma_down * eps) + sigma_up * noise[i];
  }
}

std::vector<double> res2s_noise(TorchGenerator& generator, int64_t batch, int64_t per_item) {
  LTX_CHECK(batch >= 1 && per_item >= 2, "pipeline", "res_2s noise needs at least 2 values per item, got ", per_item);
  std::vector<double> noise(static_cast<size_t>(batch * per_item));
  generator.fill_randn_f64(noise.data(), batch * per_item);
  standardize(noise.data(), batch * per_item);
  for (int64_t b = 0; b < batch; ++b) standardize(noise.data() + b * per_item, per_item);
  return noise;
}

}  // namespace ltx
