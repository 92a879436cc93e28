// Video conditioning items applied to a latent state before it is noised (ltx_core/conditioning/types):
//   frame 0      VideoConditionByLatentIndex: the encoded image's tokens replace the first latent frame's tokens in
//                the latent and the clean latent, their denoise mask set to 1 - strength;
//   other frames VideoConditionByKeyframeIndex: the tokens are appended after the generated ones with their own
//                positions (time shifted by the pixel frame index, no causal fix), clean latent = tokens, denoise
//                mask 1 - strength, no attention mask (the ti2vid pipelines do not wrap them).
// ltx_pipelines/utils/helpers.py combined_image_conditionings picks the kind by frame index. The loop then treats
// every token alike: timesteps σ·mask, x0 blended with the clean latent by the mask before the Euler step
// (post_process_latent), so a strength-1 token never moves; clear_conditioning drops the appended tokens.
#pragma once

#include <vector>

#include "pipeline/latent_tools.h"
#include "stages/denoise.h"

namespace ltx::stages {

struct VideoCondition {
  Tensor latent;      // [B or 1, C, F, h, w] normalised latent (the VAE encoder's output; F = 1 for an image); a batch
                      // of 1 conditions every item
  int64_t frame = 0;  // pixel frame index: 0 replaces the first latent frame, others are appended keyframes
  double strength = 1.0;  // 1 keeps the tokens clean, 0 lets them be denoised like the rest
  // Appended as keyframe tokens even at frame 0 (keyframe_interpolation.py's
  // image_conditionings_by_adding_guiding_latent) instead of replacing the first latent frame.
  bool as_keyframe = false;
};

// Applies the items in order to a state whose first `target.tokens()` tokens are the generated video
// (tools.py create_initial_state output, before the noiser). Checks each latent's shape against the target.
void apply_video_conditions(StreamState& state, const std::vector<VideoCondition>& conditions,
                            const VideoLatentShape& target, double fps);

// tools.py LatentTools.clear_conditioning: the first `tokens` tokens of a [B, T, C] latent.
Tensor drop_appended_tokens(const Tensor& latent, int64_t tokens);

}  // namespace ltx::stages
