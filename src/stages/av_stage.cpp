#include "stages/av_stage.h"

#include "core/error.h"
#include "pipeline/diffusion_step.h"

namespace ltx::stages {
namespace {

// tools.py create_initial_state + helpers.py create_noised_state (no conditionings): the noise is drawn in the
// token layout's shape.
StreamState noised_state(const Tensor& initial_tokens, Tensor positions, float noise_scale, NoiseSource& noise,
                         DType noise_dtype) {
  StreamState s;
  s.clean = initial_tokens;
  s.denoise_mask =
      Tensor::from_floats(DType::F32, {initial_tokens.dim(0), initial_tokens.dim(1), 1},
                          std::vector<float>(static_cast<size_t>(initial_tokens.dim(0) * initial_tokens.dim(1)), 1.0f));
  s.positions = std::move(positions);
  const Tensor n = noise.randn(initial_tokens.shape(), noise_dtype).to(DType::F32);
  s.latent = add_noise(initial_tokens, n, s.denoise_mask, noise_scale);
  return s;
}

Tensor zeros(const Shape& shape) {
  return Tensor::from_floats(DType::F32, shape, std::vector<float>(static_cast<size_t>(shape.numel()), 0.0f));
}

Tensor initial_or_zeros(const Tensor& given, const Shape& shape, const char* what) {
  if (!given.defined()) return zeros(shape);
  LTX_CHECK(given.shape() == shape, "pipeline", what, " initial latent ", given.shape().str(), " but the stage needs ",
            shape.str());
  return given.to(DType::F32);
}

}  // namespace

AvLatents run_av_stage(ltxm::Dit& dit, const StageSpec& spec, const TextContexts& text, NoiseSource& noise,
                       const Observer& observe) {
  const Tensor v0 = video_to_tokens(initial_or_zeros(spec.initial_video, spec.video.shape(), "video"));
  const Tensor a0 = audio_to_tokens(initial_or_zeros(spec.initial_audio, spec.audio.shape(), "audio"));
  StreamState video =
      noised_state(v0, video_positions(spec.video, spec.fps), spec.noise_scale, noise, spec.noise_dtype);
  StreamState audio = noised_state(a0, audio_positions(spec.audio), spec.noise_scale, noise, spec.noise_dtype);
  if (observe) {
    observe("positions.video", video.positions);
    observe("positions.audio", audio.positions);
    observe("latents.video.initial", video.latent);
    observe("latents.audio.initial", audio.latent);
  }
  euler_loop(dit, video, audio, spec.sigmas, text, spec.guidance, observe);
  // clear_conditioning drops nothing here (no appended tokens); unpatchify.
  return {video_from_tokens(video.latent, spec.video), audio_from_tokens(audio.latent, spec.audio)};
}

}  // namespace ltx::stages
