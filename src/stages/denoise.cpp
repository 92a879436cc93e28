#include "stages/denoise.h"

#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/diffusion_step.h"
#include "pipeline/finite_check.h"

namespace ltx::stages {
namespace {

using ltxm::DitCall;
using ltxm::DitStreamInput;
using ltxm::Perturbation;
using ltxm::PerturbationSpec;
using ltxm::SamplePerturbations;

// Concatenates tensors of equal trailing shape along axis 0 (f32); one f32 part is returned as it is.
Tensor concat_batch(const std::vector<Tensor>& parts) {
  if (parts.size() == 1 && parts.front().dtype() == DType::F32 && parts.front().is_contiguous()) return parts.front();
  Shape shape = parts.front().shape();
  std::vector<float> v;
  for (const Tensor& t : parts) {
    const std::vector<float> p = t.to_floats();
    v.insert(v.end(), p.begin(), p.end());
  }
  shape[0] = 0;
  for (const Tensor& t : parts) shape[0] += t.dim(0);
  return Tensor::from_floats(DType::F32, shape, v);
}

// One guidance pass: which contexts and which perturbations (helpers.py multi_modal_guider_denoising_func).
struct Pass {
  std::string name;
  Tensor video_context, audio_context;
  SamplePerturbations perturbations;
};

// The batch of passes as one DitCall: pass p occupies batch rows [p·B, (p+1)·B).
DitCall batched_call(const StreamState& video, const StreamState& audio, float sigma, const std::vector<Pass>& passes,
                     std::optional<double> sigma_f64) {
  const int64_t b = video.latent.dim(0);
  auto stream = [&](const StreamState& s, bool is_video) {
    std::vector<Tensor> latents, timesteps, positions, contexts;
    // helpers.py timesteps_from_mask: σ·denoise_mask per token.
    std::vector<float> ts = s.denoise_mask.to_floats();
    for (float& t : ts) t *= sigma;
    const Tensor timestep = Tensor::from_floats(DType::F32, s.denoise_mask.shape(), ts);
    for (const Pass& p : passes) {
      latents.push_back(s.latent);
      timesteps.push_back(timestep);
      positions.push_back(s.positions);
      contexts.push_back(is_video ? p.video_context : p.audio_context);
    }
    DitStreamInput in;
    in.latent = concat_batch(latents);
    in.timesteps = concat_batch(timesteps);
    in.positions = concat_batch(positions);
    in.context = concat_batch(contexts);
    in.sigma = Tensor::from_floats(DType::F32, {in.latent.dim(0)}, std::vector<float>(in.latent.dim(0), sigma));
    if (sigma_f64) in.sigma_f64.assign(static_cast<size_t>(in.latent.dim(0)), *sigma_f64);
    if (s.attention_mask.defined())
      in.attention_mask = concat_batch(std::vector<Tensor>(passes.size(), s.attention_mask));
    return in;
  };
  DitCall call;
  call.video = stream(video, true);
  call.audio = stream(audio, false);
  for (const Pass& p : passes)
    for (int64_t i = 0; i < b; ++i) call.perturbations.push_back(p.perturbations);
  return call;
}

Tensor rows(const Tensor& t, int64_t pass, int64_t b) { return t.slice(0, pass * b, (pass + 1) * b).contiguous(); }

// Each batch item is its own generation, so the guidance (its rescale's std in particular) is computed per item;
// with one item, as the reference pipelines run, this is guiders.py calculate on the whole tensor.
Tensor guide_items(const GuiderParams& g, const GuidancePasses& p) {
  const int64_t b = p.cond.dim(0);
  if (b == 1) return guide(g, p);
  auto item = [](const Tensor& t, int64_t i) { return t.defined() ? rows(t, i, 1) : t; };
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < b; ++i)
    parts.push_back(guide(g, {item(p.cond, i), item(p.uncond, i), item(p.perturbed, i), item(p.isolated, i)}));
  return concat_batch(parts);
}

}  // namespace

std::string step_name(int step) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "step%02d", step);
  return buf;
}

AvX0 guided_x0(ltxm::Dit& dit, const StreamState& video, const StreamState& audio, float sigma, int step,
               const TextContexts& text, const AvGuidance& g, const std::optional<AvX0>& last, const Observer& observe,
               std::string_view label, std::optional<double> sigma_f64) {
  const bool skip_v = g.video.skip(step), skip_a = g.audio.skip(step);
  if (skip_v && skip_a) {
    LTX_CHECK(last.has_value(), "pipeline", "skip_step skips step ", step, " but no earlier x0 exists");
    return *last;
  }
  // When one guider skips the step, its stream's Modality is disabled in every pass but the unconditional one and
  // its x0 is the previous step's (helpers.py:multi_modal_guider_denoising_func).
  LTX_CHECK(!(skip_v || skip_a) || last.has_value(), "pipeline", "skip_step skips step ", step,
            " but no earlier x0 exists");
  SamplePerturbations off;
  if (skip_v) off.push_back({Perturbation::DisableVideo, std::nullopt});
  if (skip_a) off.push_back({Perturbation::DisableAudio, std::nullopt});

  auto negative = [](const Tensor& neg, const Tensor& pos) { return neg.defined() ? neg : pos; };
  std::vector<Pass> passes{{"cond", text.video_positive, text.audio_positive, off}};
  if (g.video.needs_uncond() || g.audio.needs_uncond()) {
    LTX_CHECK(!g.video.needs_uncond() || text.video_negative.defined(), "pipeline",
              "video CFG needs a negative video context");
    LTX_CHECK(!g.audio.needs_uncond() || text.audio_negative.defined(), "pipeline",
              "audio CFG needs a negative audio context");
    passes.push_back({"uncond",
                      negative(text.video_negative, text.video_positive),
                      negative(text.audio_negative, text.audio_positive),
                      {}});
  }
  if (g.video.needs_perturbed() || g.audio.needs_perturbed()) {
    SamplePerturbations p = off;
    if (g.video.needs_perturbed()) p.push_back({Perturbation::SkipVideoSelfAttn, g.video.stg_blocks});
    if (g.audio.needs_perturbed()) p.push_back({Perturbation::SkipAudioSelfAttn, g.audio.stg_blocks});
    passes.push_back({"perturbed", text.video_positive, text.audio_positive, p});
  }
  if (g.video.needs_isolated() || g.audio.needs_isolated()) {
    SamplePerturbations p = off;
    p.push_back({Perturbation::SkipA2V, std::nullopt});
    p.push_back({Perturbation::SkipV2A, std::nullopt});
    passes.push_back({"isolated", text.video_positive, text.audio_positive, p});
  }

  const ltxm::DitOutput out = dit.run(batched_call(video, audio, sigma, passes, sigma_f64));
  const int64_t b = video.latent.dim(0);
  const std::string sn = label.empty() ? step_name(step) : std::string(label);
  GuidancePasses pv, pa;
  for (size_t i = 0; i < passes.size(); ++i) {
    const Tensor xv = rows(out.video_denoised, static_cast<int64_t>(i), b);
    const Tensor xa = rows(out.audio_denoised, static_cast<int64_t>(i), b);
    if (observe) {
      observe("x0.video." + sn + "." + passes[i].name, xv);
      observe("x0.audio." + sn + "." + passes[i].name, xa);
    }
    const std::string& n = passes[i].name;
    (n == "cond" ? pv.cond : n == "uncond" ? pv.uncond : n == "perturbed" ? pv.perturbed : pv.isolated) = xv;
    (n == "cond" ? pa.cond : n == "uncond" ? pa.uncond : n == "perturbed" ? pa.perturbed : pa.isolated) = xa;
  }
  AvX0 r{skip_v ? last->video : guide_items(g.video, pv), skip_a ? last->audio : guide_items(g.audio, pa)};
  if (observe) {
    observe("x0.video." + sn + ".guided", r.video);
    observe("x0.audio." + sn + ".guided", r.audio);
  }
  return r;
}

AvX0 simple_x0(ltxm::Dit& dit, const StreamState& video, const StreamState& audio, float sigma, int step,
               const TextContexts& text, const Observer& observe, std::string_view label,
               std::optional<double> sigma_f64) {
  const std::vector<Pass> passes{{"cond", text.video_positive, text.audio_positive, {}}};
  const ltxm::DitOutput out = dit.run(batched_call(video, audio, sigma, passes, sigma_f64));
  AvX0 r{out.video_denoised, out.audio_denoised};
  if (observe) {
    const std::string sn = label.empty() ? step_name(step) : std::string(label);
    for (const char* kind : {".cond", ".guided"}) {
      observe("x0.video." + sn + kind, r.video);
      observe("x0.audio." + sn + kind, r.audio);
    }
  }
  return r;
}

void euler_loop(ltxm::Dit& dit, StreamState& video, StreamState& audio, std::span<const float> sigmas,
                const TextContexts& text, const std::optional<AvGuidance>& guidance, const Observer& observe,
                std::string_view stage_name) {
  LTX_CHECK(sigmas.size() >= 2, "pipeline", "a schedule needs at least 2 sigmas, got ", sigmas.size());
  std::optional<AvX0> last;
  for (size_t k = 0; k + 1 < sigmas.size(); ++k) {
    const int step = static_cast<int>(k);
    AvX0 x0 = guidance ? guided_x0(dit, video, audio, sigmas[k], step, text, *guidance, last, observe)
                       : simple_x0(dit, video, audio, sigmas[k], step, text, observe);
    last = x0;
    const Tensor dv = post_process_x0(x0.video, video.denoise_mask, video.clean);
    const Tensor da = post_process_x0(x0.audio, audio.denoise_mask, audio.clean);
    video.latent = euler_step(video.latent, dv, sigmas[k], sigmas[k + 1]);
    audio.latent = euler_step(audio.latent, da, sigmas[k], sigmas[k + 1]);
    const std::string where = "after step " + std::to_string(k + 1) + " of " + std::to_string(sigmas.size() - 1) +
                              " of " + std::string(stage_name);
    check_finite(video.latent, "denoise", "the video latents", where);
    check_finite(audio.latent, "denoise", "the audio latents", where);
    if (observe) {
      observe("latents.video." + step_name(step), video.latent);
      observe("latents.audio." + step_name(step), audio.latent);
    }
  }
}

}  // namespace ltx::stages
