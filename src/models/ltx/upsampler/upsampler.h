// Latent upsamplers (×2 spatial with either head, ×1.5 spatial, ×2 temporal), configured from the upsampler
// file's own `config` metadata (flat, no prefix). Reference: ltx_core/model/upsampler/{model.py, res_block.py,
// pixel_shuffle.py, spatial_rational_resampler.py, blur_downsample.py}; ltx2-spec.md §6.
#pragma once

#include <cstdint>
#include <vector>

#include "io/json.h"
#include "models/ltx/video_vae/video_vae.h"

namespace ltx::upsampler {

enum class Head : uint8_t {
  Spatial,          // upsampler.0: Conv2d(mid, 4·mid) + pixel shuffle 2×2, per frame
  SpatialRational,  // upsampler.conv: Conv2d(mid, num²·mid) + shuffle num×num + binomial blur stride den
  Temporal,         // upsampler.0: Conv3d(mid, 2·mid) + shuffle over frames, first frame dropped
  SpatioTemporal,   // upsampler.0: Conv3d(mid, 8·mid) + shuffle 2×2×2, first frame dropped
};

struct UpsamplerConfig {
  int64_t in_channels = 128;
  int64_t mid_channels = 512;
  int num_blocks_per_stage = 4;
  Head head = Head::Spatial;
  int num = 2, den = 1;  // rational scale num/den

  static UpsamplerConfig from_metadata(const Json& config);  // the file's flat `config`
};

// res_block.py ResBlock: silu(norm2(conv2(silu(norm1(conv1 x)))) + x), GroupNorm(32).
struct ResBlock {
  video_vae::Conv conv1, conv2;
  std::string norm1, norm2;
  Tensor norm1_weight, norm1_bias, norm2_weight, norm2_bias;
};

struct LatentUpsampler {
  UpsamplerConfig config;
  video_vae::Conv initial_conv, final_conv, head_conv;
  Tensor initial_norm_weight, initial_norm_bias;
  std::vector<ResBlock> res_blocks, post_upsample_res_blocks;

  static LatentUpsampler load(const WeightLoader& loader, const UpsamplerConfig& config, DType compute = DType::F32);
  // Raw VAE latent [B, C, F, H, W] -> upsampled raw latent.
  Value forward(Value latent, video_vae::Taps* taps = nullptr) const;
  // Drops the pages of the convolution weights mapped from the file (core/mapped_file.h drop_file_pages): a two-stage
  // run whose memory plan does not keep every phase resident ends the upsampler's phase this way.
  void drop_weight_pages() const;
};

// model.py upsample_video: un-normalise with the VAE encoder's statistics, upsample, normalise again.
Value upsample_video(const LatentUpsampler& up, const video_vae::LatentStats& stats, Value latent,
                     video_vae::Taps* taps = nullptr);

}  // namespace ltx::upsampler
