// Latent shapes, the token layout the DiT sees (patch size 1) and the token positions, as ltx_core's
// VideoLatentTools / AudioLatentTools build them (ltx_core/tools.py, components/patchifiers.py, types.py).
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace ltx {

// VAE compression per axis (ltx_core/types.py SpatioTemporalScaleFactors.default()).
struct VideoScaleFactors {
  int64_t time = 8, height = 32, width = 32;
};

struct VideoLatentShape {
  int64_t batch = 1, channels = 128, frames = 1, height = 1, width = 1;
  int64_t tokens() const { return frames * height * width; }
  Shape shape() const { return {batch, channels, frames, height, width}; }
  // types.py VideoLatentShape.from_pixel_shape: frames (F-1)/8+1, height H/32, width W/32.
  static VideoLatentShape from_pixels(int64_t batch, int64_t channels, int64_t frames, int64_t height, int64_t width,
                                      VideoScaleFactors s = {});
};

// The audio latent's time grid in seconds (AudioPatchifier defaults: 16 kHz mel with hop 160, 4x in time).
struct AudioTiming {
  int64_t sample_rate = 16000, hop_length = 160, downsample = 4;
  bool causal = true;
  double latents_per_second() const {
    return static_cast<double>(sample_rate) / static_cast<double>(hop_length) / static_cast<double>(downsample);
  }
};

struct AudioLatentShape {
  int64_t batch = 1, channels = 8, frames = 1, mel_bins = 16;
  int64_t tokens() const { return frames; }
  Shape shape() const { return {batch, channels, frames, mel_bins}; }
  // types.py AudioLatentShape.from_video_pixel_shape: round(frames / fps · latents per second), Python's round
  // (half to even).
  static AudioLatentShape from_video(int64_t batch, int64_t channels, int64_t mel_bins, int64_t video_frames,
                                     double fps, AudioTiming t = {});
};

// patchifiers.py VideoLatentPatchifier(1): [B, C, F, H, W] <-> [B, F·H·W, C], tokens in (f, h, w) order.
Tensor video_to_tokens(const Tensor& latent);
Tensor video_from_tokens(const Tensor& tokens, const VideoLatentShape& shape);
// patchifiers.py AudioPatchifier: [B, C, T, M] <-> [B, T, C·M].
Tensor audio_to_tokens(const Tensor& latent);
Tensor audio_from_tokens(const Tensor& tokens, const AudioLatentShape& shape);

// VideoLatentTools.create_initial_state positions: [B, 3, T, 2] f32 [start, end) per axis in pixels, the time
// axis causally shifted ((t·8 + 1 - 8) clamped at 0) and divided by fps (seconds).
Tensor video_positions(const VideoLatentShape& shape, double fps, VideoScaleFactors s = {}, bool causal_fix = true);
// AudioPatchifier.get_patch_grid_bounds: [B, 1, T, 2] f32 [start, end) in seconds.
Tensor audio_positions(const AudioLatentShape& shape, AudioTiming t = {});

}  // namespace ltx
