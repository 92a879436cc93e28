// LTX audio VAE: encoder (log-mel [B, 2, T, M] -> normalised latent [B, z, T', M/4]) and decoder (latent -> log-mel),
// causal in time, configured from `config.audio_vae` and loaded from the `audio_vae.` prefix.
// Reference: ltx_core/model/audio_vae/{audio_vae.py, causal_conv_2d.py, resnet.py, downsample.py, upsample.py,
// ops.py, model_configurator.py}; ltx2-spec.md §5.1.
#pragma once

#include <cstdint>
#include <vector>

#include "io/json.h"
#include "models/ltx/video_vae/video_vae_layers.h"

namespace ltx::audio_vae {

struct AudioVaeConfig {
  int64_t ch = 128;
  std::vector<int64_t> ch_mult{1, 2, 4};
  int num_res_blocks = 2;
  int64_t in_channels = 2, out_ch = 2;
  int64_t z_channels = 8;
  bool double_z = true;
  int64_t mel_bins = 64;  // the decoder's output width (ddconfig.mel_bins or preprocessing.mel.n_mel_channels)
  int64_t sample_rate = 16000, hop_length = 160, n_fft = 1024;

  static AudioVaeConfig from_metadata(const Json& config);  // the checkpoint's whole config
};

// resnet.py ResnetBlock without temb: x' + conv2(SiLU(norm2(conv1(SiLU(norm1 x))))), PixelNorm eps 1e-6,
// x' = nin_shortcut(x) (1×1) when the width changes.
struct ResnetBlock {
  video_vae::Conv conv1, conv2, nin_shortcut;
  bool has_shortcut = false;
};

struct AudioEncoder {
  AudioVaeConfig config;
  video_vae::Conv conv_in, conv_out;
  std::vector<std::vector<ResnetBlock>> down;  // per level
  std::vector<video_vae::Conv> downsample;     // per level but the last
  ResnetBlock mid_1, mid_2;
  Tensor stats_mean, stats_std;  // [z·M'] in patchified (c, f) order

  static AudioEncoder load(const WeightLoader& audio_vae, const AudioVaeConfig& config, DType compute = DType::F32);
  // mel [B, 2, T, M] -> [B, z, T', M'] with T' = (T-1)/4 + 1 for T = 4k+1.
  Value forward(Value mel, video_vae::Taps* taps = nullptr) const;
};

struct AudioDecoder {
  AudioVaeConfig config;
  video_vae::Conv conv_in, conv_out;
  ResnetBlock mid_1, mid_2;
  std::vector<std::vector<ResnetBlock>> up;  // per level (index = level, run from the last)
  std::vector<video_vae::Conv> upsample;     // per level; level 0 has none
  Tensor stats_mean, stats_std;

  static AudioDecoder load(const WeightLoader& audio_vae, const AudioVaeConfig& config, DType compute = DType::F32);
  // latent [B, z, T', M'] -> mel [B, out_ch, max(4T'-3, 1), mel_bins].
  Value forward(Value latent, video_vae::Taps* taps = nullptr) const;
};

}  // namespace ltx::audio_vae
