#include "stages/generate.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "core/cpu_time.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/system_memory.h"
#include "io/safetensors.h"
#include "pipeline/finite_check.h"
#include "pipeline/schedule.h"
#include "stages/audio_input.h"
#include "stages/default_model.h"
#include "stages/media.h"
#include "stages/pipelines.h"
#include "stages/prompt_enhancer.h"
#include "stages/retake_input.h"

namespace ltx::stages {
namespace {

void apply(GuiderParams& g, const GuiderOverrides& o) {
  if (o.cfg) g.cfg_scale = *o.cfg;
  if (o.stg) g.stg_scale = *o.stg;
  if (o.rescale) g.rescale_scale = *o.rescale;
  if (o.modality) g.modality_scale = *o.modality;
  if (o.stg_blocks) g.stg_blocks = *o.stg_blocks;
  if (o.skip_step) g.skip_step = *o.skip_step;
}

// Runs f(); an uncategorized ltx::Error it throws leaves with `category` (the API maps the rest by phase).
template <class F>
auto in_category(ErrorCategory category, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::Unspecified) throw;
    throw e.with_category(category);
  }
}

// Times each stage into the report and tells the progress reporter.
class StageClock {
 public:
  StageClock(GenerateReport& report, ProgressReporter* progress) : report_(report), progress_(progress) {}
  void start(const std::string& stage) {
    if (progress_) progress_->begin(stage);
    stage_ = stage;
    t0_ = std::chrono::steady_clock::now();
    cpu0_ = process_cpu_seconds();
  }
  void stop() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    report_.stage_seconds.emplace_back(stage_, s);
    report_.stage_cpu_seconds.emplace_back(stage_, process_cpu_seconds() - cpu0_);
    if (progress_) progress_->end();
  }

 private:
  GenerateReport& report_;
  ProgressReporter* progress_;
  std::string stage_;
  std::chrono::steady_clock::time_point t0_;
  double cpu0_ = 0.0;
};

// The loaded models report LoRA lines to this run's reporter while it lasts, and to nobody after (also when the
// run throws).
class ReportTo {
 public:
  ReportTo(LoadedModels& m, ProgressReporter* progress) : m_(m) { m_.progress = progress; }
  ~ReportTo() { m_.progress = nullptr; }
  ReportTo(const ReportTo&) = delete;
  ReportTo& operator=(const ReportTo&) = delete;

 private:
  LoadedModels& m_;
};

// Rows `rows` of t ([N, ...]) as a new [rows.size(), ...] tensor.
Tensor pick_rows(const Tensor& t, const std::vector<int64_t>& rows) {
  Shape shape = t.shape();
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor out = Tensor::empty(t.dtype(), shape);
  for (size_t i = 0; i < rows.size(); ++i)
    out.slice(0, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1).copy_from(t.slice(0, rows[i], rows[i] + 1));
  return out;
}

// Precomputed contexts hold one prompt ([1, ...]), or one row per item.
TextContexts contexts_for_items(const TextContexts& t, int64_t items, const std::string& path) {
  auto rows = [&](const Tensor& x) -> Tensor {
    if (!x.defined() || x.dim(0) == items) return x;
    LTX_CHECK(x.dim(0) == 1, "generate", path, " holds contexts for ", x.dim(0), " prompts; the request makes ", items,
              " items");
    return pick_rows(x, std::vector<int64_t>(static_cast<size_t>(items), 0));
  };
  return {rows(t.video_positive), rows(t.audio_positive), rows(t.video_negative), rows(t.audio_negative)};
}

// The prompts through the loaded encoder in one batch (every prompt, then the negative); item p·batch + s takes
// prompt p's row.
TextContexts encode_prompts(PromptEncoder& encoder, const GenerateRequest& r, const std::string& negative,
                            int64_t items) {
  LTX_CHECK(!r.prompts.empty(), "generate", "no prompt to encode");
  std::vector<std::string> all = r.prompts;
  all.push_back(negative);
  const PromptContexts c = encoder.encode(all);
  std::vector<int64_t> positive_rows, negative_rows;
  for (int64_t i = 0; i < items; ++i) {
    positive_rows.push_back(i / r.batch);
    negative_rows.push_back(static_cast<int64_t>(r.prompts.size()));
  }
  return {pick_rows(c.video, positive_rows), pick_rows(c.audio, positive_rows), pick_rows(c.video, negative_rows),
          pick_rows(c.audio, negative_rows)};
}

// helpers.py encode_prompts with enhance_first_prompt, for every prompt: each rewritten by the loaded text encoder,
// seeded by the request's seed as the pipelines seed it; progress counts each new token as a step (where a caller may
// cancel) and hears each enhanced prompt as a note.
std::vector<std::string> enhance_prompts(PromptEncoder& encoder, const GenerateRequest& r, ProgressReporter* progress) {
  EnhanceOptions o;
  o.seed = r.seed;
  o.system_prompt = r.enhance_system_prompt;
  o.max_new_tokens = r.enhance_max_new_tokens;
  // The pipelines pass the first conditioning image (images[0][0]) to generate_enhanced_prompt: enhance_i2v.
  if (!r.images.empty()) o.image = io::read_image(r.images.front().path);
  std::vector<std::string> out;
  for (const std::string& p : r.prompts) {
    // Each new token is a step of the stage, so that a caller can follow it and cancel it.
    progress_add_steps(progress, o.max_new_tokens);
    out.push_back(enhance_prompt(
                      encoder.model(), encoder.tokenizer(), p, o, [&](int64_t) { progress_step(progress); },
                      o.image ? encoder.vision() : nullptr)
                      .prompt);
    if (progress) progress->note("enhanced prompt: " + out.back());
  }
  return out;
}

// retake.py's num_inference_steps default, which its CLI keeps for either model version.
constexpr int kRetakeSteps = 40;

// `t` [1, ...] repeated for `items` batch items.
Tensor repeat_items(const Tensor& t, int64_t items) {
  Shape shape = t.shape();
  shape[0] = items;
  Tensor all = Tensor::empty(DType::F32, shape);
  const Tensor one = t.to(DType::F32);
  for (int64_t i = 0; i < items; ++i) all.slice(0, i, i + 1).copy_from(one);
  return all;
}

// retake.py: the source's video encoded whole (_encode_video_for_retake) and its audio (if any) encoded and fitted
// to the video's length (_encode_audio_for_retake), with the request's window.
GenerationSpec::Retake retake_latents(const LoadedModels& m, const GenerateRequest& r, const RetakeSource& source,
                                      int64_t items) {
  LTX_CHECK(source.frames == r.frames && source.height == r.height && source.width == r.width && source.fps == r.fps,
            "retake", r.retake, " is ", source.frames, " frames of ", source.width, "x", source.height, " at ",
            source.fps, " fps but the request asks for ", r.frames, " of ", r.width, "x", r.height, " at ", r.fps);
  GenerationSpec::Retake out;
  const video_vae::VideoEncoder encoder = load_video_encoder(m.checkpoint, m.files.compute);
  out.video_latent = repeat_items(encode_pixels(*m.models.backend, encoder, source.pixels), items);
  if (source.audio) {
    const int64_t frames = audio_latent_shape(m.models.dit->config(), items, r.frames, r.fps).frames;
    out.audio_latent = fit_audio_latent(
        encode_audio_clip(*m.models.backend, m.checkpoint, m.files.compute, *source.audio), frames, items);
  }
  out.start = r.retake_start;
  out.end = r.retake_end;
  out.keep_video = r.retake_keep_video;
  out.keep_audio = r.retake_keep_audio;
  return out;
}

GenerationSpec generation_spec(const LoadedModels& m, const GenerateRequest& r, int64_t items,
                               const std::optional<AudioClip>& clip, const std::optional<RetakeSource>& source) {
  // res_2s is the HQ pipeline's sampler, and brings its defaults.
  PipelineDefaults defaults = r.sampler == Sampler::Res2s
                                  ? hq_pipeline_defaults()
                                  : pipeline_defaults(m.models.model_version, m.models.dit->config().n_layers);
  if (m.models.embedded_default && r.sampler != Sampler::Res2s) apply_default_model_guidance(defaults.guidance);
  GenerationSpec spec;
  spec.batch = items;
  spec.frames = r.frames;
  spec.height = r.height;
  spec.width = r.width;
  spec.fps = r.fps;
  spec.steps = r.steps > 0 ? r.steps : defaults.steps;
  spec.guidance = defaults.guidance;
  apply(spec.guidance.video, r.video_guidance);
  apply(spec.guidance.audio, r.audio_guidance);
  spec.noise_dtype = DType::BF16;  // the official pipelines run bf16 latents and draw bf16 noise
  spec.distilled = r.distilled;
  spec.sampler = r.sampler;
  if (r.distilled) spec.steps = static_cast<int>(distilled_sigmas_stage1().size()) - 1;
  if (clip)
    spec.audio_latent = in_category(ErrorCategory::InvalidRequest, [&] {
      return held_audio_latent(encode_audio_clip(*m.models.backend, m.checkpoint, m.files.compute, *clip),
                               audio_latent_shape(m.models.dit->config(), items, r.frames, r.fps), *clip,
                               static_cast<double>(r.frames) / r.fps);
    });
  if (source)
    spec.retake = in_category(ErrorCategory::InvalidRequest, [&] { return retake_latents(m, r, *source, items); });
  if (source && r.steps == 0 && !r.distilled) spec.steps = kRetakeSteps;
  std::shared_ptr<const video_vae::VideoEncoder> encoder;
  if (!r.images.empty() || !r.references.empty())
    encoder = std::make_shared<const video_vae::VideoEncoder>(load_video_encoder(m.checkpoint, m.files.compute));
  if (!r.references.empty()) {
    const ReferenceRequest refs{r.references,
                                r.conditioning_strength,
                                r.conditioning_mask,
                                r.two_stage ? r.height / 2 : r.height,
                                r.two_stage ? r.width / 2 : r.width,
                                r.frames,
                                m.ic_lora.downscale_factor,
                                m.files.compute};
    spec.references = in_category(ErrorCategory::InvalidRequest,
                                  [&] { return reference_conditions(*m.models.backend, *encoder, refs); });
  }
  if (!r.images.empty()) {  // encoded per stage size inside the pipeline (helpers.py combined_image_conditionings)
    spec.video_conditions = image_conditioner(
        *m.models.backend, r.images, encoder,
        [images = r.images](size_t i, int64_t h, int64_t w) {
          return in_category(ErrorCategory::Io, [&] { return load_conditioning_pixels(images[i], h, w); });
        },
        r.keyframe_interpolation);
  }
  return spec;
}

}  // namespace

int64_t request_items(const GenerateRequest& r) {
  return std::max<int64_t>(1, static_cast<int64_t>(r.prompts.size())) * std::max<int64_t>(1, r.batch);
}

// Precomputed contexts: `context.{video,audio}.{positive,negative}`, or the output of `ltx encode POSITIVE
// [NEGATIVE]`, whose prompt 0 is the positive and prompt 1 (if any) the negative.
TextContexts load_text_contexts(const std::string& path) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  auto get = [&](const std::string& name) {
    LTX_CHECK(f.contains(name), "generate", path, ": no tensor ", name);
    return f.get(name).to(DType::F32);
  };
  const bool from_encode = !f.contains("context.video.positive") && f.contains("prompt.0.video_context");
  const auto name = [&](const char* stream, bool negative) {
    if (!from_encode) return std::string("context.") + stream + (negative ? ".negative" : ".positive");
    return std::string("prompt.") + (negative ? "1." : "0.") + stream + "_context";
  };
  TextContexts t{get(name("video", false)), get(name("audio", false)), {}, {}};
  if (f.contains(name("video", true))) t.video_negative = get(name("video", true));
  if (f.contains(name("audio", true))) t.audio_negative = get(name("audio", true));
  return t;
}

namespace {

// Guidance passes batched into each DiT call (denoise.cpp builds them the same way).
int64_t guidance_passes(const GenerationSpec& spec) {
  if (spec.distilled) return 1;
  const GuiderParams& v = spec.guidance.video;
  const GuiderParams& a = spec.guidance.audio;
  return 1 + ((v.needs_uncond() || a.needs_uncond()) ? 1 : 0) + ((v.needs_perturbed() || a.needs_perturbed()) ? 1 : 0) +
         ((v.needs_isolated() || a.needs_isolated()) ? 1 : 0);
}

// The run's memory plan (memory_plan.h), before any heavy work; nullopt without a budget.
std::optional<MemoryPlan> plan_run_memory(const LoadedModels& m, const GenerateRequest& r, const GenerationSpec& spec,
                                          int64_t items) {
  if (r.memory_budget_bytes == 0) return std::nullopt;
  RunShape shape;
  shape.items = items;
  shape.passes = guidance_passes(spec);
  shape.frames = r.frames;
  shape.height = r.height;
  shape.width = r.width;
  shape.fps = r.fps;
  shape.two_stage = r.two_stage;
  // Appended conditioning tokens: an image not replacing frame 0 adds one latent frame at each stage's size; IC-LoRA
  // references add theirs to stage 1, where their attention weights make a [T, T] mask.
  const auto frame_tokens = [](int64_t h, int64_t w) { return (h / 32) * (w / 32); };
  int64_t appended_images = 0;
  for (const ImageConditionInput& image : r.images) appended_images += r.keyframe_interpolation || image.frame != 0;
  shape.appended_video_tokens = appended_images * frame_tokens(r.height, r.width);
  if (!spec.references.empty()) {
    const int64_t h1 = r.two_stage ? r.height / 2 : r.height, w1 = r.two_stage ? r.width / 2 : r.width;
    int64_t tokens = video_latent_shape(m.models.dit->config(), 1, r.frames, h1, w1).tokens() +
                     appended_images * frame_tokens(h1, w1);
    bool weighted = false;
    for (const VideoCondition& c : spec.references) {
      tokens += c.latent.dim(2) * c.latent.dim(3) * c.latent.dim(4);
      weighted = weighted || !c.attention.empty();
    }
    if (!r.two_stage)
      shape.appended_video_tokens =
          tokens - video_latent_shape(m.models.dit->config(), 1, r.frames, r.height, r.width).tokens();
    if (weighted) shape.masked_stage_tokens = tokens;
  }
  PhaseWeights weights = m.weight_bytes;
  weights.held_bytes = resident_bytes_outside_mappings();
  if (!r.text_embeddings.empty()) weights.text_encoder = 0;
  return in_category(ErrorCategory::OutOfMemory,
                     [&] { return plan_memory(m.models.dit->config(), weights, shape, r.memory_budget_bytes); });
}

// How a phase's streaming plans hold their mapped weights under the run's plan: its resident share less what its
// unstreamed plans read whole, the rest streamed (a resident phase keeps all, read ahead on its first call); nullopt
// (left to the OS) without a plan.
std::optional<StreamingPolicy> streaming_for(const std::optional<MemoryPlan>& plan, const std::string& phase) {
  if (!plan) return std::nullopt;
  const PhaseMemory* p = plan->phase(phase);
  if (p == nullptr || p->streamed_bytes == 0) return StreamingPolicy{SIZE_MAX, kStreamReadAheadBytes};
  return StreamingPolicy{p->resident_bytes - p->unstreamed_bytes, plan->read_ahead_bytes};
}

// What the video decode may plan for: the budget less what the process held before the run, the plan's reserve and
// the weights resident while it runs.
size_t decode_budget(const std::optional<MemoryPlan>& plan, size_t budget) {
  if (!plan) return budget;
  size_t held = plan->held_bytes + plan->reserve_bytes;
  for (const PhaseMemory& p : plan->phases)
    if (plan->all_resident || p.name == "decoders") held += p.resident_bytes;
  return budget > held ? budget - held : 1;
}

// Between phases of a plan that does not hold every phase's weights: the finished phase's weight pages go, and so
// does its plans' activation memory (`release_activations`), which the plan counts in that phase only.
void end_phase(const std::optional<MemoryPlan>& plan, const std::function<void()>& release_activations) {
  if (!plan || plan->all_resident) return;
  drop_all_file_pages();
  release_activations();
}

}  // namespace

GenerateReport generate(LoadedModels& m, const GenerateRequest& r, ProgressReporter* progress) {
  LTX_CHECK(!r.two_stage || m.upsampler, "generate", "two stages need an upsampler (--upsampler)");
  const ReportTo report_to(m, progress);
  GenerateReport report;
  StageClock clock(report, progress);
  if (m.lora) m.lora->use_stage1();  // a previous two-stage call ends on (or was stopped in) the stage-2 set
  AvModels& models = m.models;
  report.model_version = models.model_version;
  const int64_t items = request_items(r);
  std::optional<AudioClip> clip;  // audio-to-video: read and encoded before any heavy work; the output's audio
  if (!r.audio.empty()) {
    clock.start("encode audio");
    report.audio_max_duration = a2v_audio_max_duration(r.audio_max_duration, r.frames, r.fps);
    clip = in_category(ErrorCategory::Io,
                       [&] { return read_audio_clip(r.audio, r.audio_start, report.audio_max_duration); });
  }
  std::optional<RetakeSource> source;  // retake: read and encoded before any heavy work
  if (!r.retake.empty()) {
    clock.start("encode video");
    source = in_category(ErrorCategory::InvalidRequest, [&] { return read_retake_source(r.retake); });
  }
  if (!r.references.empty()) clock.start("encode video");  // IC-LoRA references: read and encoded up front
  GenerationSpec spec = generation_spec(m, r, items, clip, source);
  if (clip || source || !r.references.empty()) clock.stop();
  const std::optional<MemoryPlan> memory = plan_run_memory(m, r, spec, items);
  if (memory) {
    report.memory_plan = memory->describe();
    if (progress) progress->note(report.memory_plan);
  }
  models.dit->set_weight_streaming(streaming_for(memory, "transformer"));
  if (m.encoder) m.encoder->set_weight_streaming(streaming_for(memory, "text encoder"));
  TextContexts text;
  std::vector<std::string> prompts = r.prompts;  // as encoded: enhanced with enhance_prompt
  if (!r.text_embeddings.empty()) {
    text = in_category(ErrorCategory::InvalidRequest, [&] {
      return contexts_for_items(load_text_contexts(r.text_embeddings), items, r.text_embeddings);
    });
  } else {
    LTX_CHECK(m.encoder, "generate", "no text encoder is loaded: give text embeddings");
    if (r.enhance_prompt) {
      clock.start("enhance prompt");
      prompts = enhance_prompts(*m.encoder, r, progress);
      clock.stop();
    }
    clock.start("encode prompt");
    // retake.py's negative prompt defaults to the empty string, the other pipelines' to the official one.
    report.negative_prompt = r.negative_prompt.value_or(r.retake.empty() ? default_negative_prompt() : "");
    GenerateRequest encoded = r;
    encoded.prompts = prompts;
    text = encode_prompts(*m.encoder, encoded, report.negative_prompt, items);
    clock.stop();
    end_phase(memory, [&m] { m.encoder->release_activations(); });
  }

  report.steps = spec.steps;
  report.guidance = spec.guidance;
  TorchGenerator generator(r.seed);
  TorchNoise live(generator);
  std::unique_ptr<NoiseReplayer> replay;
  if (!r.replay_noise.empty())
    replay = in_category(ErrorCategory::InvalidRequest,
                         [&] { return std::make_unique<NoiseReplayer>(NoiseReplayer::load(r.replay_noise)); });
  NoiseSource& base = replay ? static_cast<NoiseSource&>(*replay) : static_cast<NoiseSource&>(live);
  NoiseRecorder recorder(base);
  NoiseSource& noise = r.record_noise ? static_cast<NoiseSource&>(recorder) : base;

  clock.start("denoise");
  const Observer steps = progress_observer(progress);
  AvLatents latents = r.two_stage ? run_two_stage({*models.dit, *models.dit, *m.upsampler, models.video_stats,
                                                   [&m, &memory, &r] {
                                                     // The upsampler's phase ends before stage 2.
                                                     if (memory && !memory->all_resident)
                                                       m.upsampler->drop_weight_pages();
                                                     // IC-LoRA: stage 2 without the --lora files (ic_lora.py).
                                                     if (m.lora) m.lora->use_stage2(r.references.empty());
                                                   }},
                                                  spec, text, noise, steps)
                                  : run_one_stage(*models.dit, spec, text, noise, steps);
  text = {};  // the contexts are not needed past the loops
  clock.stop();
  end_phase(memory, [&models] { models.dit->release_activations(); });

  clock.start("decode");
  progress_add_steps(progress, 3);
  // No strategy within the budget is an OutOfMemory error (video_vae_plan.cpp).
  const Tensor video = decode_video(*models.backend, *models.video_decoder, latents.video, &noise, spec.noise_dtype,
                                    decode_budget(memory, r.memory_budget_bytes), &report.decode_strategy);
  check_finite(video, "decode", "the decoded video", "after the video VAE");
  progress_step(progress);
  // Audio-to-video returns the input clip, not its decode (a2vid_two_stage.py: "to preserve fidelity").
  Tensor wave;  // [B, 2, N]
  if (clip) {
    latents = {};
    wave = Tensor::empty(DType::F32, {items, clip->channels, clip->length()});
    for (int64_t i = 0; i < items; ++i)
      wave.slice(0, i, i + 1)
          .copy_from(Tensor::from_floats(DType::F32, {1, clip->channels, clip->length()}, clip->samples));
    progress_step(progress);
  } else {
    const Tensor mel = decode_audio_mel(*models.backend, *models.audio_decoder, latents.audio);
    latents = {};
    progress_step(progress);
    wave = models.vocoder->run(*models.backend, mel);
    check_finite(wave, "decode", "the decoded audio", "after the vocoder");
  }
  progress_step(progress);
  clock.stop();

  report.frames = video.dim(2);
  report.height = video.dim(3);
  report.width = video.dim(4);
  report.audio_sample_rate = clip ? clip->sample_rate : models.vocoder->output_sampling_rate();
  report.audio_channels = wave.dim(1);
  report.audio_samples = wave.dim(2);
  for (int64_t i = 0; i < items; ++i) {
    GeneratedItem item;
    if (r.text_embeddings.empty()) {
      item.prompt = prompts[static_cast<size_t>(i / r.batch)];
      if (r.enhance_prompt) item.original_prompt = r.prompts[static_cast<size_t>(i / r.batch)];
    }
    item.rgb = video_to_rgb8(video, i);
    item.audio = wave.slice(0, i, i + 1).contiguous().to_floats();
    report.items.push_back(std::move(item));
  }
  if (r.record_noise) report.noise = recorder.entries();
  return report;
}

}  // namespace ltx::stages
