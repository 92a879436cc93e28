// The res_2s denoising loop (ltx_pipelines/utils/samplers.py res2s_audio_video_denoising_loop, the sampler of
// ti2vid_two_stages_hq.py): per step one x0 at the current point and one at the geometric-mean substep σ_mid =
// √(σ·σ_next), combined with second-order exponential-integrator weights (pipeline/res2s.h), with fresh normalized
// f64 noise re-injected at the substep and at the step (SDE). A schedule ending at 0 ends at 0.0011 instead and is
// finished by one more x0.
#pragma once

#include "stages/denoise.h"

namespace ltx::stages {

// Like euler_loop: the states advance in place; observed x0.<stream>.stepNN.* and x0.<stream>.mid.stepNN.*,
// latents.<stream>.mid.stepNN (the substep point given to the DiT) and latents.<stream>.stepNN; the final x0 at
// 0.0011 as x0.<stream>.stepNN.* with NN the number of steps. The SDE noise comes from two generators of its own seeded
// as the reference seeds them (-1 for steps, 9999 for substeps), whatever the request's seed.
void res2s_loop(ltxm::Dit& dit, StreamState& video, StreamState& audio, std::span<const float> sigmas,
                const TextContexts& text, const std::optional<AvGuidance>& guidance, const Observer& observe,
                std::string_view stage_name = "denoising");

}  // namespace ltx::stages
