// The denoising loop over the DiT: per step the x0 of the guidance passes (one batched DiT call), the guidance
// combine per stream, post-processing with the clean latent and the Euler step for video, then audio
// (ltx_pipelines/utils/samplers.py euler_denoising_loop; helpers.py multi_modal_guider_denoising_func,
// simple_denoising_func, modality_from_latent_state).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "models/ltx/dit/dit.h"
#include "pipeline/params.h"

namespace ltx::stages {

// One stream's latent state in the token layout (ltx_core/types.py LatentState).
struct StreamState {
  Tensor latent;          // [B, T, C] f32
  Tensor clean;           // [B, T, C] f32
  Tensor denoise_mask;    // [B, T, 1] f32: 1 noisy, 0 clean
  Tensor positions;       // [B, 3, T, 2] video / [B, 1, T, 2] audio
  Tensor attention_mask;  // [B, T, T] in [0, 1] (mask_utils.py build_attention_mask) or empty: full attention
};

// Text contexts after the embeddings processor, [B, S, D] per stream; negatives may be empty when no guider
// asks for an unconditional pass.
struct TextContexts {
  Tensor video_positive, audio_positive, video_negative, audio_negative;
};

// Receives named tensors as a stage makes them (golden comparison, debugging): "x0.video.step00.cond", ...
using Observer = std::function<void(const std::string& name, const Tensor& value)>;

struct AvX0 {
  Tensor video, audio;  // [B, T, C]
};

// Guided x0 of step `step`: cond, then uncond / perturbed / isolated as the guiders need them, batched into one
// DiT call; observed as x0.<stream>.stepNN.{cond,uncond,perturbed,isolated,guided}. `last` is the previous step's
// result, reused when both guiders skip the step. `label` replaces "stepNN" in the observed names when given;
// `sigma_f64`: σ as the caller holds it in float64 (DitStreamInput::sigma_f64), `sigma` being its f32 rounding.
AvX0 guided_x0(ltxm::Dit& dit, const StreamState& video, const StreamState& audio, float sigma, int step,
               const TextContexts& text, const AvGuidance& guidance, const std::optional<AvX0>& last,
               const Observer& observe, std::string_view label = {}, std::optional<double> sigma_f64 = {});

// One positive pass, its x0 used as is (observed as .cond and .guided).
AvX0 simple_x0(ltxm::Dit& dit, const StreamState& video, const StreamState& audio, float sigma, int step,
               const TextContexts& text, const Observer& observe, std::string_view label = {},
               std::optional<double> sigma_f64 = {});

// "step07": the observed names' step part.
std::string step_name(int step);

// euler_denoising_loop over sigmas[:-1]; the states' latents are advanced in place and observed as
// latents.<stream>.stepNN. Without guidance, one positive pass per step.
void euler_loop(ltxm::Dit& dit, StreamState& video, StreamState& audio, std::span<const float> sigmas,
                const TextContexts& text, const std::optional<AvGuidance>& guidance, const Observer& observe,
                std::string_view stage_name = "denoising");

}  // namespace ltx::stages
