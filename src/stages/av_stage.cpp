#include "stages/av_stage.h"

#include "core/error.h"
#include "pipeline/diffusion_step.h"
#include "stages/conditioning.h"
#include "stages/res2s_loop.h"

namespace ltx::stages {
namespace {

// tools.py create_initial_state: the initial tokens as latent and clean latent, denoise mask 1.
StreamState initial_state(const Tensor& initial_tokens, Tensor positions) {
  StreamState s;
  s.latent = initial_tokens;
  s.clean = initial_tokens;
  s.denoise_mask =
      Tensor::from_floats(DType::F32, {initial_tokens.dim(0), initial_tokens.dim(1), 1},
                          std::vector<float>(static_cast<size_t>(initial_tokens.dim(0) * initial_tokens.dim(1)), 1.0f));
  s.positions = std::move(positions);
  return s;
}

// noisers.py GaussianNoiser, after the conditionings: the noise is drawn in the token layout's shape, appended
// conditioning tokens included.
void add_state_noise(StreamState& s, float noise_scale, NoiseSource& noise, DType noise_dtype) {
  const Tensor n = noise.randn(s.latent.shape(), noise_dtype).to(DType::F32);
  s.latent = add_noise(s.latent, n, s.denoise_mask, noise_scale);
}

// A given denoise mask replaces the state's (ltx_core conditioning items that write the mask, as retake's).
void set_mask(StreamState& s, const Tensor& mask, const char* what) {
  if (!mask.defined()) return;
  LTX_CHECK(mask.shape() == s.denoise_mask.shape(), "pipeline", what, " denoise mask ", mask.shape().str(),
            " but the state's tokens need ", s.denoise_mask.shape().str());
  s.denoise_mask = mask.to(DType::F32);
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
  StreamState video = initial_state(v0, video_positions(spec.video, spec.fps));
  apply_video_conditions(video, spec.video_conditions, spec.video, spec.fps);
  set_mask(video, spec.video_mask, "video");
  add_state_noise(video, spec.noise_scale, noise, spec.noise_dtype);
  StreamState audio = initial_state(a0, audio_positions(spec.audio));
  set_mask(audio, spec.audio_mask, "audio");
  add_state_noise(audio, spec.audio_frozen ? 0.0f : spec.noise_scale, noise, spec.noise_dtype);
  if (spec.audio_frozen) audio.denoise_mask = zeros(audio.denoise_mask.shape());
  if (observe) {
    if (spec.video_mask.defined()) observe("denoise_mask.video", video.denoise_mask);
    if (spec.audio_mask.defined()) observe("denoise_mask.audio", audio.denoise_mask);
    observe("positions.video", video.positions);
    observe("positions.audio", audio.positions);
    if (video.attention_mask.defined()) observe("attention_mask.video", video.attention_mask);
    observe("latents.video.initial", video.latent);
    observe("latents.audio.initial", audio.latent);
  }
  const auto loop = spec.sampler == Sampler::Res2s ? res2s_loop : euler_loop;
  loop(dit, video, audio, spec.sigmas, text, spec.guidance, observe, spec.name);
  // clear_conditioning (drops appended keyframe tokens), unpatchify.
  return {video_from_tokens(drop_appended_tokens(video.latent, spec.video.tokens()), spec.video),
          audio_from_tokens(audio.latent, spec.audio)};
}

}  // namespace ltx::stages
