// The arithmetic of the res_2s second-order sampler between DiT calls, on the host in double as the reference does
// it: the Runge-Kutta coefficients from the phi functions (ltx_pipelines/utils/res2s.py), the SDE step that
// re-injects noise (ltx_core/components/diffusion_steps.py Res2sDiffusionStep) and the normalized f64 noise it
// injects (ltx_pipelines/utils/samplers.py _get_new_noise). The loop itself is stages/res2s_loop.h.
#pragma once

#include <span>
#include <vector>

#include "pipeline/noise.h"

namespace ltx {

// φ_j(z) = (e^z - Σ_{k<j} z^k/k!) / z^j, 1/j! when |z| < 1e-10.
double res2s_phi(int j, double neg_h);

struct Res2sCoefficients {
  double a21 = 0, b1 = 0, b2 = 0;
};

// For a step of log-size h = log(σ/σ_next) with the substep at c2 (0.5, the midpoint): a21 = c2·φ1(-h·c2),
// b2 = φ2(-h)/c2, b1 = φ1(-h) - b2.
Res2sCoefficients res2s_coefficients(double h, double c2 = 0.5);

// Res2sDiffusionStep.step from `sample` (the anchor) towards `target` (the RK estimate) between σ and σ_next with
// σ_up = σ_next/2, adding `noise`; returns `target` unchanged when σ_next is 0. The reference computes the step's
// coefficients in the dtype of its sigma tensors: f32 at full steps (the schedule), f64 at substeps (σ·σ_next's
// square root in double); `sigma_in_f32` picks which.
void res2s_sde_step(std::span<const double> sample, std::span<double> target, std::span<const double> noise,
                    double sigma, double sigma_next, bool sigma_in_f32);

// _get_new_noise for a [batch, tokens, channels] latent: f64 torch.randn from `generator`, standardized over the
// whole tensor, then again per batch item over tokens and channels (unbiased std both times).
std::vector<double> res2s_noise(TorchGenerator& generator, int64_t batch, int64_t per_item);

}  // namespace ltx
