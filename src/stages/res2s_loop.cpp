#include "stages/res2s_loop.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/diffusion_step.h"
#include "pipeline/finite_check.h"
#include "pipeline/res2s.h"

namespace ltx::stages {
namespace {

constexpr uint64_t kStepNoiseSeed = ~0ull;    // samplers.py noise_seed=-1, as torch takes it (two's complement)
constexpr uint64_t kSubstepNoiseSeed = 9999;  // noise_seed + 10000
constexpr float kLastSigma = 0.0011f;         // replaces a final σ of 0 (a float32 tensor in the reference)
constexpr double kSubstep = 0.5;              // c2: the midpoint in log-σ
constexpr int kBongIterations = 100;          // bongmath_max_iter

std::vector<double> widen(const Tensor& t) {
  const std::vector<float> f = t.to_floats();
  return {f.begin(), f.end()};
}

Tensor narrow(const std::vector<double>& v, const Shape& shape) {
  return Tensor::from_floats(DType::F32, shape, std::vector<float>(v.begin(), v.end()));
}

// One stream's quantities of a step, in double.
struct Stream {
  StreamState& state;
  std::vector<double> anchor, eps1, next;
  std::vector<float> mask, clean;  // per element
};

Stream stream_of(StreamState& s) {
  Stream r{s, widen(s.latent), {}, {}, {}, {}};
  r.mask = s.denoise_mask.broadcast_to(s.latent.shape()).to_floats();
  r.clean = s.clean.to_floats();
  return r;
}

// helpers.py post_process_latent on a double latent: x·mask in double plus clean·(1 - mask) in float.
void keep_clean(Stream& s, std::vector<double>& x) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * s.mask[i] + static_cast<double>(s.clean[i] * (1.0f - s.mask[i]));
}

// samplers.py _inject_sde_noise (legacy mode): fresh noise, the SDE step from the anchor to `x`, clean tokens kept.
void inject_noise(Stream& s, std::vector<double>& x, TorchGenerator& generator, double sigma, double sigma_next,
                  bool sigma_in_f32) {
  const int64_t batch = s.state.latent.dim(0);
  const std::vector<double> noise = res2s_noise(generator, batch, s.state.latent.numel() / batch);
  res2s_sde_step(s.anchor, x, noise, sigma, sigma_next, sigma_in_f32);
  keep_clean(s, x);
}

// Stage 1 of a step for one stream, from x0 at σ: ε1 = x0 - anchor, the substep point anchor + h·a21·ε1 with noise
// injected there, then the bong iteration (moving the anchor so that the noisy point lies on its own line).
void substep_point(Stream& s, const Tensor& x0_tensor, double h, const Res2sCoefficients& c, double sigma,
                   double sigma_mid, TorchGenerator& noise) {
  const std::vector<float> x0 = x0_tensor.to_floats();
  s.eps1.resize(x0.size());
  s.next.resize(x0.size());
  for (size_t i = 0; i < x0.size(); ++i) {
    s.eps1[i] = static_cast<double>(x0[i]) - s.anchor[i];
    s.next[i] = s.anchor[i] + h * c.a21 * s.eps1[i];
  }
  inject_noise(s, s.next, noise, sigma, sigma_mid, /*sigma_in_f32=*/false);
  if (h < 0.5 && sigma > 0.03)
    for (size_t i = 0; i < x0.size(); ++i)
      for (int it = 0; it < kBongIterations; ++it) {
        s.anchor[i] = s.next[i] - h * c.a21 * s.eps1[i];
        s.eps1[i] = static_cast<double>(x0[i]) - s.anchor[i];
      }
}

// Stage 2 for one stream, from x0 at the substep: anchor + h·(b1·ε1 + b2·ε2), noise injected at the step; the
// stream's latent becomes the result.
void finish_step(Stream& s, const Tensor& x0_tensor, double h, const Res2sCoefficients& c, double sigma,
                 double sigma_next, TorchGenerator& noise) {
  const std::vector<float> x0 = x0_tensor.to_floats();
  for (size_t i = 0; i < x0.size(); ++i) {
    const double eps2 = static_cast<double>(x0[i]) - s.anchor[i];
    s.next[i] = s.anchor[i] + h * (c.b1 * s.eps1[i] + c.b2 * eps2);
  }
  inject_noise(s, s.next, noise, sigma, sigma_next, /*sigma_in_f32=*/true);
  s.state.latent = narrow(s.next, s.state.latent.shape());
}

}  // namespace

void res2s_loop(ltxm::Dit& dit, StreamState& video, StreamState& audio, std::span<const float> schedule,
                const TextContexts& text, const std::optional<AvGuidance>& guidance, const Observer& observe,
                std::string_view stage_name) {
  LTX_CHECK(schedule.size() >= 2, "pipeline", "a schedule needs at least 2 sigmas, got ", schedule.size());
  const size_t steps = schedule.size() - 1;
  std::vector<float> sigmas(schedule.begin(), schedule.end());
  const bool ends_at_zero = sigmas.back() == 0.0f;
  if (ends_at_zero) {
    sigmas.back() = kLastSigma;
    sigmas.push_back(0.0f);
  }
  TorchGenerator step_noise(kStepNoiseSeed), substep_noise(kSubstepNoiseSeed);
  std::optional<AvX0> last;
  // x0 post-processed with the clean latent; the guiders keep the raw x0 of every call as `last` (skip_step).
  auto x0_at = [&](const StreamState& v, const StreamState& a, double sigma, bool f64, int step,
                   const std::string& label) {
    const auto sf = static_cast<float>(sigma);
    const std::optional<double> exact = f64 ? std::optional<double>(sigma) : std::nullopt;
    last = guidance ? guided_x0(dit, v, a, sf, step, text, *guidance, last, observe, label, exact)
                    : simple_x0(dit, v, a, sf, step, text, observe, label, exact);
    return AvX0{post_process_x0(last->video, v.denoise_mask, v.clean),
                post_process_x0(last->audio, a.denoise_mask, a.clean)};
  };
  auto observe_latents = [&](const std::string& label, const Tensor& v, const Tensor& a) {
    if (!observe) return;
    observe("latents.video." + label, v);
    observe("latents.audio." + label, a);
  };

  for (size_t k = 0; k < steps; ++k) {
    const int step = static_cast<int>(k);
    const std::string label = step_name(step);
    const double sigma = sigmas[k], sigma_next = sigmas[k + 1];
    const double h = -std::log(sigma_next / sigma);
    const Res2sCoefficients c = res2s_coefficients(h, kSubstep);
    const double sigma_mid = std::sqrt(sigma * sigma_next);  // a float64 σ in the reference, kept as one
    Stream v = stream_of(video), a = stream_of(audio);

    const AvX0 d1 = x0_at(video, audio, sigma, false, step, label);
    substep_point(v, d1.video, h, c, sigma, sigma_mid, substep_noise);
    substep_point(a, d1.audio, h, c, sigma, sigma_mid, substep_noise);
    StreamState video_mid = video, audio_mid = audio;
    video_mid.latent = narrow(v.next, video.latent.shape());
    audio_mid.latent = narrow(a.next, audio.latent.shape());
    observe_latents("mid." + label, video_mid.latent, audio_mid.latent);

    // The substep's x0 (its own step index 0 to the guiders, as the reference calls it).
    const AvX0 d2 = x0_at(video_mid, audio_mid, sigma_mid, true, 0, "mid." + label);
    finish_step(v, d2.video, h, c, sigma, sigma_next, step_noise);
    finish_step(a, d2.audio, h, c, sigma, sigma_next, step_noise);
    const std::string where =
        "after step " + std::to_string(k + 1) + " of " + std::to_string(steps) + " of " + std::string(stage_name);
    check_finite(video.latent, "denoise", "the video latents", where);
    check_finite(audio.latent, "denoise", "the audio latents", where);
    observe_latents(label, video.latent, audio.latent);
  }
  if (ends_at_zero) {  // the last x0 is the result (observed as the stage's final latents by its caller)
    const AvX0 d =
        x0_at(video, audio, sigmas[steps], false, static_cast<int>(steps), step_name(static_cast<int>(steps)));
    video.latent = d.video;
    audio.latent = d.audio;
  }
}

}  // namespace ltx::stages
