#include "pipeline/latent_tools.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"

namespace ltx {

VideoLatentShape VideoLatentShape::from_pixels(int64_t batch, int64_t channels, int64_t frames, int64_t height,
                                               int64_t width, VideoScaleFactors s) {
  return {batch, channels, (frames - 1) / s.time + 1, height / s.height, width / s.width};
}

AudioLatentShape AudioLatentShape::from_video(int64_t batch, int64_t channels, int64_t mel_bins, int64_t video_frames,
                                              double fps, AudioTiming t) {
  const double duration = static_cast<double>(video_frames) / fps;
  const double frames = std::nearbyint(duration * t.latents_per_second());  // round half to even, as Python
  return {batch, channels, static_cast<int64_t>(frames), mel_bins};
}

Tensor video_to_tokens(const Tensor& latent) {
  LTX_CHECK(latent.rank() == 5, "pipeline", "video latent must be [B, C, F, H, W], got ", latent.shape().str());
  const int64_t b = latent.dim(0), c = latent.dim(1);
  const int64_t t = latent.dim(2) * latent.dim(3) * latent.dim(4);
  return latent.permute({0, 2, 3, 4, 1}).contiguous().reshape({b, t, c});
}

Tensor video_from_tokens(const Tensor& tokens, const VideoLatentShape& s) {
  LTX_CHECK(
      tokens.rank() == 3 && tokens.dim(0) == s.batch && tokens.dim(1) == s.tokens() && tokens.dim(2) == s.channels,
      "pipeline", "video tokens ", tokens.shape().str(), " do not fit latent ", s.shape().str());
  return tokens.contiguous()
      .reshape({s.batch, s.frames, s.height, s.width, s.channels})
      .permute({0, 4, 1, 2, 3})
      .contiguous();
}

Tensor audio_to_tokens(const Tensor& latent) {
  LTX_CHECK(latent.rank() == 4, "pipeline", "audio latent must be [B, C, T, M], got ", latent.shape().str());
  const int64_t b = latent.dim(0), c = latent.dim(1), t = latent.dim(2), m = latent.dim(3);
  return latent.permute({0, 2, 1, 3}).contiguous().reshape({b, t, c * m});
}

Tensor audio_from_tokens(const Tensor& tokens, const AudioLatentShape& s) {
  LTX_CHECK(tokens.rank() == 3 && tokens.dim(0) == s.batch && tokens.dim(1) == s.frames &&
                tokens.dim(2) == s.channels * s.mel_bins,
            "pipeline", "audio tokens ", tokens.shape().str(), " do not fit latent ", s.shape().str());
  return tokens.contiguous().reshape({s.batch, s.frames, s.channels, s.mel_bins}).permute({0, 2, 1, 3}).contiguous();
}

Tensor video_positions(const VideoLatentShape& s, double fps, VideoScaleFactors f, bool causal_fix) {
  const int64_t t = s.tokens();
  std::vector<float> out(static_cast<size_t>(s.batch * 3 * t * 2));
  const auto fps_f = static_cast<float>(fps);  // torch divides the f32 tensor by the scalar in f32
  const int64_t scale[3] = {f.time, f.height, f.width};
  for (int64_t fi = 0; fi < s.frames; ++fi) {
    for (int64_t hi = 0; hi < s.height; ++hi) {
      for (int64_t wi = 0; wi < s.width; ++wi) {
        const int64_t token = (fi * s.height + hi) * s.width + wi;
        const int64_t start[3] = {fi, hi, wi};
        for (int axis = 0; axis < 3; ++axis) {
          for (int bound = 0; bound < 2; ++bound) {
            int64_t px = (start[axis] + bound) * scale[axis];  // patchifiers.py get_pixel_coords
            float v = 0;
            if (axis == 0) {
              if (causal_fix) px = std::max<int64_t>(px + 1 - f.time, 0);
              v = static_cast<float>(px) / fps_f;
            } else {
              v = static_cast<float>(px);
            }
            for (int64_t b = 0; b < s.batch; ++b)
              out[static_cast<size_t>(((b * 3 + axis) * t + token) * 2 + bound)] = v;
          }
        }
      }
    }
  }
  return Tensor::from_floats(DType::F32, {s.batch, 3, t, 2}, out);
}

Tensor audio_positions(const AudioLatentShape& s, AudioTiming timing) {
  // patchifiers.py AudioPatchifier._get_audio_latent_time_in_sec in f32: mel = i·4 (+1-4, clipped at 0 when
  // causal), seconds = mel·hop / sample_rate.
  auto seconds = [&](int64_t i) {
    float mel = static_cast<float>(i) * static_cast<float>(timing.downsample);
    if (timing.causal) mel = std::max(mel + 1.0f - static_cast<float>(timing.downsample), 0.0f);
    return mel * static_cast<float>(timing.hop_length) / static_cast<float>(timing.sample_rate);
  };
  std::vector<float> out(static_cast<size_t>(s.batch * s.frames * 2));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.frames; ++i) {
      out[static_cast<size_t>((b * s.frames + i) * 2)] = seconds(i);
      out[static_cast<size_t>((b * s.frames + i) * 2 + 1)] = seconds(i + 1);
    }
  }
  return Tensor::from_floats(DType::F32, {s.batch, 1, s.frames, 2}, out);
}

}  // namespace ltx
