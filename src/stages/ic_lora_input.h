// IC-LoRA inputs (ltx_pipelines/ic_lora.py): reference ("control") videos read as utils/media_io.py
// load_video_conditioning reads them, the conditioning attention mask video read and pooled to the reference latent
// as _load_mask_video and _downsample_mask_to_latent do, and the LoRA files' reference_downscale_factor metadata
// (_read_lora_reference_downscale_factor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "models/ltx/video_vae/video_vae.h"
#include "stages/conditioning.h"

namespace ltx {
class Backend;  // backend/backend.h: what a graph runs on
}  // namespace ltx

namespace ltx::stages {

struct ReferenceVideoInput {
  std::string path;
  double strength = 1.0;  // VideoConditionByReferenceLatent strength in [0, 1]: 1 keeps the reference clean
};

// "FILE" or "FILE:STRENGTH" (a trailing number only, so a path may hold colons); `default_strength` without one.
ReferenceVideoInput parse_reference_argument(const std::string& argument, double default_strength);

// load_video_conditioning: the file's first `frame_cap` frames, each resized to cover height x width (bilinear),
// centre-cropped and scaled to [-1, 1]: [1, 3, F, height, width] f32.
Tensor load_reference_pixels(const std::string& path, int64_t height, int64_t width, int64_t frame_cap);

// The latent frames the video VAE encoder makes of `pixel_frames` frames: it drops the last (F - 1) % 8 first
// (video_vae.py VideoEncoder.forward).
int64_t reference_latent_frames(int64_t pixel_frames);

// Whether a mask of `mask_frames` frames pools to `latent_frames` (_downsample_mask_to_latent: 1 + k·(F_lat − 1)).
bool mask_frames_fit(int64_t mask_frames, int64_t latent_frames);

// Why a stage-1 size cannot hold references at this downscale factor (they are read at the stage-1 size / factor,
// which the VAE needs in multiples of 32), or empty.
std::string reference_size_problem(int64_t stage1_height, int64_t stage1_width, int64_t factor);

// ic_lora.py _create_conditionings' references for one stage-1 size.
struct ReferenceRequest {
  std::vector<ReferenceVideoInput> videos;
  double conditioning_strength = 1.0;  // the attention weight (conditioning_attention_strength)
  std::string mask;                    // the conditioning mask video, or empty
  int64_t height = 0, width = 0;       // the stage-1 size
  int64_t frames = 0;                  // the frame cap (the request's frame count)
  int64_t downscale_factor = 1;        // the IC-LoRAs' reference_downscale_factor
  DType compute = DType::F32;          // the run's latent dtype: a scalar weight is held in it, as resolve_cross_mask
};

// Every video (and the mask) read and checked first, then each encoded (its frames past 8k+1 dropped, as the encoder
// does) into a Placement::Reference condition whose tokens are weighed by the pooled mask times the strength, by the
// strength alone when below 1, or not at all.
std::vector<VideoCondition> reference_conditions(const Backend& backend, const video_vae::VideoEncoder& encoder,
                                                 const ReferenceRequest& r);

// _load_mask_video: the mask file's first `frame_cap` frames at height x width as load_video_conditioning reads them,
// the channels' mean remapped from [-1, 1] to [0, 1] and clamped: [1, 1, F, height, width]. ic_lora.py computes it in
// bf16 whatever the pipeline's dtype, so every step here rounds to bf16 where torch's bf16 ops round.
Tensor load_attention_mask_pixels(const std::string& path, int64_t height, int64_t width, int64_t frame_cap);

// _downsample_mask_to_latent times the attention strength: the [1, 1, F, H, W] mask pooled to a reference latent of
// frames x height x width (area interpolation per frame, then the first frame alone and the others averaged in
// groups of (F - 1) / (frames - 1), as the causal VAE encodes them), multiplied by `strength`, in bf16; one value
// per reference token in (f, h, w) order. Throws when F does not fit the latent frames, naming the counts that do.
std::vector<float> attention_mask_weights(const Tensor& mask, int64_t frames, int64_t height, int64_t width,
                                          double strength);

// The LoRA files' reference_downscale_factor (safetensors metadata; 1 when absent) and which files state one (the
// IC-LoRAs that say so). Files stating different factors (other than 1) cannot be combined: an error naming them.
struct IcLoraMetadata {
  int64_t downscale_factor = 1;
  std::vector<std::string> ic_loras;
};
IcLoraMetadata read_ic_lora_metadata(const std::vector<std::string>& lora_paths);

}  // namespace ltx::stages
