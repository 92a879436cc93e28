// One diffusion stage over video and audio (ltx_pipelines/utils/helpers.py denoise_audio_video): build both
// latent states (zeros or a given latent, denoise mask 1, positions), apply the video conditionings, noise them (video
// first, then audio, from the same source), run the Euler loop, unpatchify.
#pragma once

#include <vector>

#include "pipeline/latent_tools.h"
#include "pipeline/noise.h"
#include "stages/conditioning.h"
#include "stages/denoise.h"

namespace ltx::stages {

// The denoising loop: euler_loop (stages/denoise.h, every pipeline's default) or res2s_loop (stages/res2s_loop.h,
// ti2vid_two_stages_hq.py's sampler: two x0 per step).
enum class Sampler { Euler, Res2s };

struct StageSpec {
  VideoLatentShape video;
  AudioLatentShape audio;
  double fps = 24.0;
  std::vector<float> sigmas;
  float noise_scale = 1.0f;  // GaussianNoiser noise_scale: 1 for stage 1, σ0 of the schedule for a refine
  Tensor initial_video;      // [B, C, F, H, W] or empty (zeros)
  Tensor initial_audio;      // [B, C, T, M] or empty (zeros)
  // Audio-to-video (helpers.py denoise_video_only): initial_audio is held fixed, noised with scale 0 (the noise is
  // still drawn) and given denoise mask 0, so every step keeps it.
  bool audio_frozen = false;
  // Retake (retake.py TemporalRegionMask): each stream's denoise mask [B, T, 1], set before the noise (1: the token
  // starts from noise and is regenerated, 0: it keeps its initial latent throughout); empty: 1 everywhere.
  Tensor video_mask, audio_mask;
  std::optional<AvGuidance> guidance;  // absent: one positive pass per step
  Sampler sampler = Sampler::Euler;
  DType noise_dtype = DType::F32;  // the reference draws in the latent dtype (bf16 in the official pipelines)
  std::vector<VideoCondition> video_conditions;  // images / keyframes (stages/conditioning.h), applied in order
  std::string name = "denoising";                // for errors: "stage 1", "stage 2 (refine)" in two-stage flows
};

struct AvLatents {
  Tensor video;  // [B, C, F, H, W]
  Tensor audio;  // [B, C, T, M]
};

// Observed: positions.{video,audio}, latents.{video,audio}.initial, the given denoise masks
// (denoise_mask.{video,audio}), the loop's x0 and latents.
AvLatents run_av_stage(ltxm::Dit& dit, const StageSpec& spec, const TextContexts& text, NoiseSource& noise,
                       const Observer& observe = {});

}  // namespace ltx::stages
