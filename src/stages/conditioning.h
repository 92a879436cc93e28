// Video conditioning items applied to a latent state before it is noised (ltx_core/conditioning/types):
//   frame 0      VideoConditionByLatentIndex: the encoded image's tokens replace the first latent frame's tokens in
//                the latent and the clean latent, their denoise mask set to 1 - strength;
//   other frames VideoConditionByKeyframeIndex: the tokens are appended after the generated ones with their own
//                positions (time shifted by the pixel frame index, no causal fix), clean latent = tokens, denoise
//                mask 1 - strength;
//   reference    VideoConditionByReferenceLatent (IC-LoRA): a control video's tokens appended the same way at time
//                0 with the causal fix, their height and width positions times the downscale factor.
// ltx_pipelines/utils/helpers.py combined_image_conditionings picks the image kinds by frame index, ic_lora.py
// appends the references after them. An item wrapped in ConditioningItemAttentionStrengthWrapper (`attention`)
// builds the stream's [B, T, T] self-attention mask (mask_utils.py build_attention_mask); once a mask exists every
// later appended item extends it. The loop then treats every token alike: timesteps σ·mask, x0 blended with the
// clean latent by the mask before the Euler step (post_process_latent), so a strength-1 token never moves;
// clear_conditioning drops the appended tokens.
#pragma once

#include <vector>

#include "pipeline/latent_tools.h"
#include "stages/denoise.h"

namespace ltx::stages {

enum class Placement {
  ByFrame,    // frame 0 replaces the first latent frame, other frames are appended keyframes
  Keyframe,   // appended as keyframe tokens even at frame 0 (keyframe_interpolation.py's
              // image_conditionings_by_adding_guiding_latent)
  Reference,  // an IC-LoRA reference video's tokens (reference_video_cond.py)
};

struct VideoCondition {
  Tensor latent;      // [B or 1, C, F, h, w] normalised latent (the VAE encoder's output; F = 1 for an image); a batch
                      // of 1 conditions every item
  int64_t frame = 0;  // pixel frame index (images)
  double strength = 1.0;  // 1 keeps the tokens clean, 0 lets them be denoised like the rest
  Placement placement = Placement::ByFrame;
  int64_t downscale_factor = 1;  // Reference: target / reference size, the H and W positions scaled by it
  // ConditioningItemAttentionStrengthWrapper: how strongly the appended tokens and the generated ones attend to
  // each other, in [0, 1]: one value for every token or one per appended token; empty: not wrapped.
  std::vector<float> attention;
};

// Applies the items in order to a state whose first `target.tokens()` tokens are the generated video
// (tools.py create_initial_state output, before the noiser). Checks each latent's shape against the target; sets
// state.attention_mask when an item asks for attention weights.
void apply_video_conditions(StreamState& state, const std::vector<VideoCondition>& conditions,
                            const VideoLatentShape& target, double fps);

// tools.py LatentTools.clear_conditioning: the first `tokens` tokens of a [B, T, C] latent.
Tensor drop_appended_tokens(const Tensor& latent, int64_t tokens);

}  // namespace ltx::stages
