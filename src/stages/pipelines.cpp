#include "stages/pipelines.h"

#include "core/error.h"
#include "pipeline/schedule.h"
#include "stages/media.h"
#include "stages/retake_input.h"

namespace ltx::stages {
namespace {

constexpr int64_t kAudioMelBins = 16;  // ltx_core/types.py AudioLatentShape.from_duration default

Tensor sigmas_tensor(const std::vector<float>& s) {
  return Tensor::from_floats(DType::F32, {static_cast<int64_t>(s.size())}, s);
}

Observer prefixed(const Observer& observe, const std::string& prefix) {
  if (!observe) return {};
  return [observe, prefix](const std::string& name, const Tensor& t) { observe(prefix + name, t); };
}

void observe_final(const Observer& observe, const std::string& prefix, const AvLatents& l) {
  if (!observe) return;
  observe(prefix + "latents.video.final", l.video);
  observe(prefix + "latents.audio.final", l.audio);
}

// Stage 1's sigmas and guidance: the LTX2Scheduler with guidance, or the distilled list with none.
void set_stage1_sampling(const GenerationSpec& spec, StageSpec& s) {
  if (spec.distilled) {
    const auto sigmas = distilled_sigmas_stage1();
    s.sigmas.assign(sigmas.begin(), sigmas.end());
    s.guidance.reset();
    s.sampler = spec.sampler;
    return;
  }
  s.sampler = spec.sampler;
  // ti2vid_two_stages_hq.py shifts its schedule by the stage's latent token count; the other pipelines by the
  // default count.
  s.sigmas = spec.sampler == Sampler::Res2s ? ltx2_sigmas({.steps = spec.steps, .tokens = s.video.tokens()})
                                            : ltx2_sigmas({.steps = spec.steps});
  s.guidance = spec.guidance;
  if (spec.audio_latent.defined()) s.guidance->audio = GuiderParams{};  // a2vid: the frozen audio is not guided
}

// a2vid_two_stage.py's audio guider has no negative context: the unconditional pass keeps the positive audio one.
TextContexts stage_text(const GenerationSpec& spec, const TextContexts& text) {
  if (!spec.audio_latent.defined()) return text;
  TextContexts t = text;
  t.audio_negative = Tensor();
  return t;
}

// Audio-to-video: every stage starts from the encoded input audio and keeps it.
void hold_audio(const GenerationSpec& spec, StageSpec& s) {
  if (!spec.audio_latent.defined()) return;
  s.initial_audio = spec.audio_latent;
  s.audio_frozen = true;
}

// Retake: the source's latents as the initial ones, the region masks from the tokens' time spans.
void retake_from_source(const GenerationSpec::Retake& r, StageSpec& s) {
  s.initial_video = r.video_latent;
  s.video_mask =
      temporal_region_mask(video_positions(s.video, s.fps), r.keep_video ? 0.0 : r.start, r.keep_video ? 0.0 : r.end);
  if (!r.audio_latent.defined()) return;
  s.initial_audio = r.audio_latent;
  s.audio_mask =
      temporal_region_mask(audio_positions(s.audio), r.keep_audio ? 0.0 : r.start, r.keep_audio ? 0.0 : r.end);
}

}  // namespace

VideoLatentShape video_latent_shape(const ltxm::DitConfig& dit, int64_t batch, int64_t frames, int64_t height,
                                    int64_t width) {
  return VideoLatentShape::from_pixels(batch, dit.in_channels, frames, height, width);
}

AudioLatentShape audio_latent_shape(const ltxm::DitConfig& dit, int64_t batch, int64_t frames, double fps) {
  LTX_CHECK(dit.audio_in_channels % kAudioMelBins == 0, "pipeline", "audio_in_channels ", dit.audio_in_channels,
            " is not a multiple of ", kAudioMelBins, " mel bins");
  return AudioLatentShape::from_video(batch, dit.audio_in_channels / kAudioMelBins, kAudioMelBins, frames, fps);
}

AvLatents run_one_stage(ltxm::Dit& dit, const GenerationSpec& spec, const TextContexts& text, NoiseSource& noise,
                        const Observer& observe) {
  check_generation_request(spec.frames, spec.height, spec.width, spec.fps, false);
  StageSpec s;
  s.video = video_latent_shape(dit.config(), spec.batch, spec.frames, spec.height, spec.width);
  s.audio = audio_latent_shape(dit.config(), spec.batch, spec.frames, spec.fps);
  s.fps = spec.fps;
  set_stage1_sampling(spec, s);
  s.noise_dtype = spec.noise_dtype;
  if (spec.video_conditions) s.video_conditions = spec.video_conditions(spec.height, spec.width);
  s.video_conditions.insert(s.video_conditions.end(), spec.references.begin(), spec.references.end());
  hold_audio(spec, s);
  if (spec.retake) retake_from_source(*spec.retake, s);
  if (observe) observe("sigmas", sigmas_tensor(s.sigmas));
  AvLatents out = run_av_stage(dit, s, stage_text(spec, text), noise, observe);
  observe_final(observe, "", out);
  return out;
}

AvLatents run_two_stage(const TwoStageModels& m, const GenerationSpec& spec, const TextContexts& text,
                        NoiseSource& noise, const Observer& observe) {
  check_generation_request(spec.frames, spec.height, spec.width, spec.fps, true);
  LTX_CHECK(!spec.retake, "pipeline", "retake runs one stage, at the source's size");
  StageSpec s1;
  s1.video = video_latent_shape(m.stage1.config(), spec.batch, spec.frames, spec.height / 2, spec.width / 2);
  s1.audio = audio_latent_shape(m.stage1.config(), spec.batch, spec.frames, spec.fps);
  s1.fps = spec.fps;
  set_stage1_sampling(spec, s1);
  s1.noise_dtype = spec.noise_dtype;
  if (spec.video_conditions) s1.video_conditions = spec.video_conditions(spec.height / 2, spec.width / 2);
  s1.video_conditions.insert(s1.video_conditions.end(), spec.references.begin(), spec.references.end());
  hold_audio(spec, s1);
  s1.name = "stage 1";
  const Observer o1 = prefixed(observe, "stage1.");
  if (o1) o1("sigmas", sigmas_tensor(s1.sigmas));
  const AvLatents l1 = run_av_stage(m.stage1, s1, stage_text(spec, text), noise, o1);
  observe_final(o1, "", l1);

  const Tensor up = upsample_latent(m.stage1.backend(), m.upsampler, m.video_stats, l1.video);
  if (observe) observe("upsampled.video", up);
  if (m.before_stage2) m.before_stage2();

  StageSpec s2;
  s2.video = video_latent_shape(m.stage2.config(), spec.batch, spec.frames, spec.height, spec.width);
  s2.audio = s1.audio;
  LTX_CHECK(up.shape() == s2.video.shape(), "pipeline", "upsampled latent ", up.shape().str(), " but stage 2 needs ",
            s2.video.shape().str());
  s2.fps = spec.fps;
  const auto distilled = distilled_sigmas_stage2();
  s2.sigmas.assign(distilled.begin(), distilled.end());
  s2.noise_scale = s2.sigmas.front();
  s2.sampler = spec.sampler;
  s2.initial_video = up;
  s2.initial_audio = l1.audio;
  s2.noise_dtype = spec.noise_dtype;
  if (spec.video_conditions) s2.video_conditions = spec.video_conditions(spec.height, spec.width);
  hold_audio(spec, s2);  // a2vid_two_stage.py: the encoded audio again, not stage 1's (the same values)
  s2.name = "stage 2 (refine)";
  const Observer o2 = prefixed(observe, "stage2.");
  if (o2) o2("sigmas", sigmas_tensor(s2.sigmas));
  AvLatents out = run_av_stage(m.stage2, s2, text, noise, o2);
  observe_final(observe, "", out);
  return out;
}

}  // namespace ltx::stages
