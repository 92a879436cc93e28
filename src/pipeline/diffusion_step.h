// The flow-matching arithmetic between DiT calls, in f32 on the host: noising a latent state
// (ltx_core/components/noisers.py GaussianNoiser), blending x0 with the clean latent where the denoise mask is 0
// (ltx_pipelines/utils/helpers.py post_process_latent) and the Euler step (components/diffusion_steps.py
// EulerDiffusionStep, utils.py to_velocity).
#pragma once

#include "core/tensor.h"

namespace ltx {

// latent = noise·(mask·scale) + latent·(1 - mask·scale). latent, noise [B, T, C]; mask [B, T, 1].
Tensor add_noise(const Tensor& latent, const Tensor& noise, const Tensor& denoise_mask, float noise_scale);

// x0·mask + clean·(1 - mask).
Tensor post_process_x0(const Tensor& x0, const Tensor& denoise_mask, const Tensor& clean);

// v = (x - x0)/σ; x + v·(σ_next - σ), all in f32 (σ ≠ 0).
Tensor euler_step(const Tensor& x, const Tensor& x0, float sigma, float sigma_next);

}  // namespace ltx
