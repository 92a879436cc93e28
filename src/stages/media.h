// The model stages around the diffusion loop, each one graph run: the x2 latent upsample with the VAE statistics
// (ltx_core/model/upsampler/model.py upsample_video), the video decode (video_vae.py decode_video, untiled), the
// audio decode (audio_vae.py decode_audio: audio VAE decoder, then the vocoder), and the conversion of decoded
// frames to 8-bit RGB. Each runs on the backend it is given (the engine's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/upsampler/upsampler.h"
#include "models/ltx/video_vae/video_vae.h"
#include "models/ltx/vocoder/vocoder.h"
#include "pipeline/noise.h"

namespace ltx {
class Backend;  // backend/backend.h: what a graph runs on
}  // namespace ltx

namespace ltx::stages {

// [B, C, F, H, W] normalised latent -> upsampled normalised latent.
Tensor upsample_latent(const Backend& backend, const upsampler::LatentUpsampler& up,
                       const video_vae::LatentStats& stats, const Tensor& latent);

// [B, C, F', H', W'] -> [B, 3, 8(F'-1)+1, 32H', 32W'] f32 in about [-1, 1]. A timestep-conditioned decoder draws
// its noise from `noise` in the reference's order (the latent, then each injecting res block's two spatial maps).
// With `budget_bytes` > 0 the decode planner (video_vae_plan.h) picks the strategy whose planned peak fits (whole,
// split batch, temporal chunks, spatial tiles; throws naming the smallest peak when none does) and `strategy`
// (optional) receives its description; 0 decodes whole.
Tensor decode_video(const Backend& backend, const video_vae::VideoDecoder& decoder, const Tensor& latent,
                    NoiseSource* noise, DType noise_dtype = DType::F32, size_t budget_bytes = 0,
                    std::string* strategy = nullptr);

// [B, z, T, M] -> mel [B, 2, T', mel_bins].
Tensor decode_audio_mel(const Backend& backend, const audio_vae::AudioDecoder& decoder, const Tensor& latent);

// One video's frames as uint8 RGB [F, H, W, 3]: ((x+1)/2).clamp(0,1)·255 truncated (video_vae.py decode_video
// convert_to_uint8). `video` is [B, 3, F, H, W]; `item` picks the batch item.
std::vector<uint8_t> video_to_rgb8(const Tensor& video, int64_t item = 0);

}  // namespace ltx::stages
