#include "stages/generate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>

#include "core/cpu_time.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/mp4_writer.h"
#include "io/png_write.h"
#include "io/safetensors.h"
#include "io/staged_outputs.h"
#include "io/wav_write.h"
#include "models/ltx/decode_memory_budget.h"
#include "models/ltx/dit_checkpoint.h"
#include "pipeline/schedule.h"
#include "stages/av_models.h"
#include "stages/default_model.h"
#include "stages/media.h"
#include "stages/pipelines.h"
#include "stages/sidecar.h"
#include "stages/text_encoder.h"

namespace ltx::stages {
namespace {

namespace fs = std::filesystem;

void apply(GuiderParams& g, const GuiderOverrides& o) {
  if (o.cfg) g.cfg_scale = *o.cfg;
  if (o.stg) g.stg_scale = *o.stg;
  if (o.rescale) g.rescale_scale = *o.rescale;
  if (o.modality) g.modality_scale = *o.modality;
  if (o.stg_blocks) g.stg_blocks = *o.stg_blocks;
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

std::string cache_key(const GenerateRequest& r) {
  std::string key = r.checkpoint + "\n" + r.dit + "\n" + r.dit_config + "\n" + r.upsampler + "\n" + r.text_encoder +
                    "\n" + std::string(dtype_name(r.compute));
  for (const auto& l : r.loras) key += "\nlora " + l.path + ":" + std::to_string(l.strength);
  if (r.distilled_lora)
    key += "\ndistilled " + r.distilled_lora->path + ":" + std::to_string(r.distilled_lora->strength);
  return key + (r.lora_allow_partial ? "\npartial" : "");
}

constexpr const char* kOfficialDitRoot = "model.diffusion_model.";

bool is_gguf(const std::string& path) { return fs::path(path).extension() == ".gguf"; }

// A GGUF DiT without its own `config` entry takes --dit-config, else the official checkpoint's config.
std::string dit_config_path(const GenerateRequest& r) {
  if (!r.dit_config.empty() || !is_gguf(r.dit)) return r.dit_config;
  return open_gguf(r.dit)->metadata().count("config") ? "" : r.checkpoint;
}

// --checkpoint must hold everything but (with --dit) the DiT: says which parts a DiT-only or partial file lacks.
void check_checkpoint_parts(const WeightSource& c, const std::string& path, bool need_dit) {
  const auto config_it = c.metadata().find("config");
  const Json config = config_it == c.metadata().end() ? Json::object() : metadata_json(c, "config");
  std::vector<std::string> missing;
  auto need = [&](const char* section, const char* prefix, const char* what) {
    bool has_tensors = false;
    for (const std::string& n : c.names())
      if (n.rfind(prefix, 0) == 0) {
        has_tensors = true;
        break;
      }
    if (!config.contains(section) || !has_tensors) missing.push_back(std::string(what) + " (" + prefix + "*)");
  };
  if (need_dit) need("transformer", kOfficialDitRoot, "the DiT");
  need("vae", "vae.", "the video VAE");
  need("audio_vae", "audio_vae.", "the audio VAE");
  need("vocoder", "vocoder.", "the vocoder");
  if (missing.empty()) return;
  std::string list;
  for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
  fail("generate", "checkpoint " + path + " lacks " + list +
                       ": --checkpoint must be the official single-file checkpoint; a DiT-only file goes to --dit");
}

bool any(const GuiderOverrides& o) { return o.cfg || o.stg || o.rescale || o.modality || o.stg_blocks; }

std::string frame_name(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "frame_%05lld.png", static_cast<long long>(i));
  return buf;
}

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

}  // namespace

std::vector<std::string> request_prompts(const GenerateRequest& r) {
  return r.prompts.empty() ? std::vector<std::string>{r.prompt} : r.prompts;
}

int64_t request_items(const GenerateRequest& r) {
  return std::max<int64_t>(1, static_cast<int64_t>(r.prompts.size())) * std::max<int64_t>(1, r.batch);
}

std::string item_path(const std::string& path, int64_t item, int64_t items) {
  if (items == 1 || path.empty()) return path;
  const fs::path p(path);
  return (p.parent_path() / (p.stem().string() + "_" + std::to_string(item) + p.extension().string())).string();
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

void check_request(const GenerateRequest& r) {
  std::vector<std::string> problems;
  auto need_file = [&](const std::string& path, const char* what) {
    if (path.empty()) return;
    if (!fs::exists(path)) problems.push_back(std::string(what) + " " + path + " does not exist");
  };
  if (r.checkpoint.empty()) problems.push_back("--checkpoint is required");
  need_file(r.checkpoint, "checkpoint");
  if (!r.checkpoint.empty() && (fs::is_directory(r.checkpoint) || is_gguf(r.checkpoint)))
    problems.push_back("--checkpoint " + r.checkpoint +
                       " is a DiT only (Diffusers folder or GGUF); the video VAE, audio VAE, vocoder and text "
                       "projection come from the official single-file checkpoint: give that as --checkpoint and this "
                       "as --dit");
  need_file(r.dit, "DiT");
  need_file(r.dit_config, "DiT config");
  if (!r.dit_config.empty() && r.dit.empty()) problems.push_back("--dit-config needs --dit");
  for (const auto& l : r.loras) need_file(l.path, "LoRA");
  if (r.distilled_lora) {
    need_file(r.distilled_lora->path, "distilled LoRA");
    if (!r.two_stage) problems.push_back("--distilled-lora is for the stage-2 refine: it needs --two-stage");
    if (r.distilled)
      problems.push_back(
          "--distilled runs a distilled checkpoint on both stages; --distilled-lora is for the base "
          "model's two-stage refine: give one of them");
  }
  if (r.distilled && r.steps > 0)
    problems.push_back("--steps does not apply with --distilled (the distilled sigma lists fix the steps)");
  if (r.distilled && (any(r.video_guidance) || any(r.audio_guidance)))
    problems.push_back("guidance options do not apply with --distilled (one positive pass per step)");
  if (r.text_encoder.empty() == r.text_embeddings.empty())
    problems.push_back("give exactly one of --text-encoder and --text-embeddings");
  need_file(r.text_encoder, "text encoder");
  need_file(r.text_embeddings, "text embeddings");
  if (!r.text_encoder.empty() && r.prompt.empty() && r.prompts.empty())
    problems.push_back("--prompt is required with a text encoder");
  if (!r.prompt.empty() && !r.prompts.empty()) problems.push_back("give one prompt or a list of prompts, not both");
  for (size_t i = 0; i < r.prompts.size(); ++i)
    if (r.prompts[i].empty()) problems.push_back("prompt " + std::to_string(i + 1) + " is empty");
  if (!r.text_embeddings.empty() && !r.prompts.empty())
    problems.push_back(
        "several prompts need a text encoder (--text-embeddings holds one prompt's contexts; --batch N makes N "
        "samples of it)");
  if (r.batch < 1) problems.push_back("--batch must be at least 1");
  if (r.two_stage && r.upsampler.empty()) problems.push_back("two stages need --upsampler");
  need_file(r.upsampler, "upsampler");
  need_file(r.replay_noise, "noise recording");
  if (!r.record_noise.empty() && !r.replay_noise.empty())
    problems.push_back("--record-noise and --replay-noise exclude each other");
  if (r.output.empty()) problems.push_back("--output is required");
  for (const std::string& path : {r.output, r.wav, r.frames_dir, r.sidecar, r.record_noise}) {
    if (path.empty()) continue;
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty() && !fs::is_directory(dir)) problems.push_back("output folder " + dir.string() + " does not exist");
  }
  if (!r.frames_dir.empty() && fs::exists(r.frames_dir) && !fs::is_directory(r.frames_dir))
    problems.push_back("--frames-dir " + r.frames_dir + " exists and is not a folder");
  if (r.steps < 0) problems.push_back("--steps must be positive");
  for (const std::string& p : image_condition_problems(r.images, r.frames)) problems.push_back(p);
  try {
    check_generation_request(r.frames, r.height, r.width, r.fps, r.two_stage);
  } catch (const Error& e) {
    std::string m = e.what();
    const std::string prefix = "[generate] ";
    if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
    problems.push_back(m);
  }
  if (problems.empty()) return;
  std::ostringstream os;
  for (size_t i = 0; i < problems.size(); ++i) os << (i ? "; " : "") << problems[i];
  fail("generate", os.str());
}

GenerateReport generate(const GenerateRequest& r, ProgressReporter* progress, ModelCache* cache) {
  const auto t_start = std::chrono::steady_clock::now();
  check_request(r);
  GenerateReport report;
  StageClock clock(report, progress);

  ModelCache local;
  ModelCache& m = cache ? *cache : local;
  m.progress = progress;
  if (m.key != cache_key(r)) {
    clock.start("load models");
    m = ModelCache{};
    m.progress = progress;
    // The tokenizer's thread first: it is the longest load, and overlaps all the others.
    std::future<gemma3::Tokenizer> tokenizer;
    if (!r.text_encoder.empty()) tokenizer = PromptEncoder::start_tokenizer(r.text_encoder);
    m.checkpoint = open_safetensors(r.checkpoint);
    check_checkpoint_parts(*m.checkpoint, r.checkpoint, r.dit.empty());
    // The DiT: the checkpoint's own, or --dit in any layout open_dit_checkpoint reads.
    std::optional<ltxm::DitCheckpoint> dit;
    std::shared_ptr<const WeightSource> dit_weights = m.checkpoint;
    std::string dit_root = kOfficialDitRoot;
    if (!r.dit.empty()) {
      dit = ltxm::open_dit_checkpoint(r.dit, ltxm::DitModelType::AudioVideo, dit_config_path(r));
      dit_weights = dit->weights;
      dit_root = dit->root;
    }
    // LoRA files are read against the DiT file's layer list before anything heavy is loaded.
    const LoraRequest lora_request{r.loras, r.distilled_lora, r.lora_allow_partial};
    std::vector<ltxm::LoraAdapter> adapters;
    if (!r.loras.empty() || r.distilled_lora)
      adapters = read_loras(lora_request, checkpoint_lora_targets(*dit_weights, dit_root));
    m.models = load_av_models(m.checkpoint, r.compute, {.dit = !dit});
    if (dit) {
      // The latents and text contexts the checkpoint's other parts make must fit this DiT.
      const ltxm::DitConfig own =
          ltxm::DitConfig::from_metadata(m.models->config.at("transformer"), ltxm::DitModelType::AudioVideo);
      const int64_t vae_channels = m.models->video_stats.mean.numel();
      LTX_CHECK(dit->config.in_channels == vae_channels && dit->config.audio_in_channels == own.audio_in_channels,
                "generate", "the DiT of ", r.dit, " takes ", dit->config.in_channels, " video and ",
                dit->config.audio_in_channels, " audio latent channels but ", r.checkpoint, " makes ", vae_channels,
                " and ", own.audio_in_channels, ": --dit and --checkpoint must be the same model");
      m.models->dit = std::make_unique<ltxm::Dit>(ltxm::Dit::load(dit->loader(), dit->config, r.compute));
    }
    if (!adapters.empty()) {
      ModelCache* cache_ptr = &m;
      m.lora = std::make_unique<LoraWeights>(
          *m.models->dit, dit_weights, r.compute, lora_request,
          [cache_ptr](const std::string& line) {
            if (cache_ptr->progress) cache_ptr->progress->note(line);
          },
          dit_root, std::move(adapters));
    }
    if (r.two_stage) m.upsampler = load_upsampler(open_safetensors(r.upsampler), r.compute);
    if (!r.text_encoder.empty())
      m.encoder = PromptEncoder::load(r.text_encoder, std::move(tokenizer), m.checkpoint,
                                      m.models->config.at("transformer"), r.compute, prepared_cache_dir());
    m.key = cache_key(r);
    clock.stop();
  }
  if (m.lora) m.lora->use_stage1();  // a previous two-stage call ends on the stage-2 set
  AvModels& models = *m.models;
  report.model_version = models.model_version;
  const std::vector<std::string> prompts = request_prompts(r);
  const int64_t items = request_items(r);
  TextContexts text;
  if (!r.text_embeddings.empty()) {
    text = contexts_for_items(load_text_contexts(r.text_embeddings), items, r.text_embeddings);
  } else {
    clock.start("encode prompt");
    report.negative_prompt = r.negative_prompt.value_or(default_negative_prompt());
    // One encoder batch: every prompt, then the negative; item p·batch + s takes prompt p's row.
    std::vector<std::string> all = prompts;
    all.push_back(report.negative_prompt);
    const PromptContexts c = m.encoder->encode(all);
    std::vector<int64_t> positive_rows, negative_rows;
    for (int64_t i = 0; i < items; ++i) {
      positive_rows.push_back(i / r.batch);
      negative_rows.push_back(static_cast<int64_t>(prompts.size()));
    }
    text = {pick_rows(c.video, positive_rows), pick_rows(c.audio, positive_rows), pick_rows(c.video, negative_rows),
            pick_rows(c.audio, negative_rows)};
    clock.stop();
  }

  const PipelineDefaults defaults = pipeline_defaults(models.model_version, models.dit->config().n_layers);
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
  if (r.distilled) spec.steps = static_cast<int>(distilled_sigmas_stage1().size()) - 1;
  report.steps = spec.steps;
  report.guidance = spec.guidance;

  if (!r.images.empty()) {  // encoded per stage size inside the pipeline (helpers.py combined_image_conditionings)
    auto encoder = std::make_shared<const video_vae::VideoEncoder>(load_video_encoder(m.checkpoint, r.compute));
    spec.video_conditions = image_conditioner(r.images, encoder, [&r](size_t i, int64_t h, int64_t w) {
      return load_conditioning_pixels(r.images[i], h, w);
    });
  }
  TorchGenerator generator(r.seed);
  TorchNoise live(generator);
  std::unique_ptr<NoiseReplayer> replay;
  if (!r.replay_noise.empty()) replay = std::make_unique<NoiseReplayer>(NoiseReplayer::load(r.replay_noise));
  NoiseSource& base = replay ? static_cast<NoiseSource&>(*replay) : static_cast<NoiseSource&>(live);
  NoiseRecorder recorder(base);
  NoiseSource& noise = r.record_noise.empty() ? base : static_cast<NoiseSource&>(recorder);

  clock.start("denoise");
  const Observer steps = progress_observer(progress);
  const AvLatents latents = r.two_stage ? run_two_stage({*models.dit, *models.dit, *m.upsampler, models.video_stats,
                                                         [&m] {
                                                           if (m.lora) m.lora->use_stage2();
                                                         }},
                                                        spec, text, noise, steps)
                                        : run_one_stage(*models.dit, spec, text, noise, steps);
  clock.stop();

  clock.start("decode");
  progress_add_steps(progress, 3);
  const Tensor video = decode_video(*models.video_decoder, latents.video, &noise, spec.noise_dtype,
                                    memory_budget(r.memory_budget), &report.decode_strategy);
  progress_step(progress);
  const Tensor mel = decode_audio_mel(*models.audio_decoder, latents.audio);
  progress_step(progress);
  const Tensor wave = models.vocoder->run(mel);  // [B, 2, N]
  progress_step(progress);
  clock.stop();

  clock.start("write");
  report.frames = video.dim(2);
  report.height = video.dim(3);
  report.width = video.dim(4);
  report.audio_sample_rate = models.vocoder->output_sampling_rate();
  report.audio_samples = wave.dim(2);
  report.items = items;
  io::StagedOutputs out;  // nothing appears at the targets until every output of every item is complete
  std::vector<GenerateRequest> item_requests;
  for (int64_t i = 0; i < items; ++i) {
    GenerateRequest ri = r;  // this item's prompt and file names (the sidecar records them)
    ri.prompt = prompts[static_cast<size_t>(i / r.batch)];
    ri.prompts.clear();
    ri.output = item_path(r.output, i, items);
    ri.wav = item_path(r.wav, i, items);
    ri.frames_dir = item_path(r.frames_dir, i, items);
    ri.sidecar = item_path(r.sidecar, i, items);
    const std::vector<uint8_t> rgb = video_to_rgb8(video, i);
    const std::vector<float> samples = wave.slice(0, i, i + 1).contiguous().to_floats();
    if (!ri.wav.empty()) io::write_wav(out.file(ri.wav), report.audio_sample_rate, wave.dim(1), samples);
    if (!ri.frames_dir.empty()) {
      std::vector<std::string> names;
      for (int64_t f = 0; f < report.frames; ++f) names.push_back(frame_name(f));
      const std::vector<std::string> paths = out.files_in(ri.frames_dir, names);
      const size_t frame_bytes = static_cast<size_t>(report.height * report.width * 3);
      for (size_t f = 0; f < paths.size(); ++f)
        io::write_png(paths[f], report.height, report.width,
                      std::span<const uint8_t>(rgb).subspan(f * frame_bytes, frame_bytes));
    }
    io::write_mp4(out.file(ri.output), {report.frames, report.height, report.width, r.fps, rgb},
                  io::Mp4AudioTrack{report.audio_sample_rate, wave.dim(1), samples});
    for (const std::string& p : {ri.output, ri.wav, ri.frames_dir, ri.sidecar})
      if (!p.empty()) report.written.push_back(p);
    item_requests.push_back(std::move(ri));
  }
  // One recording for the whole batch: each draw is [items, ...], as the batch drew it.
  if (!r.record_noise.empty()) recorder.save(out.file(r.record_noise), {{"seed", std::to_string(r.seed)}});
  if (!r.record_noise.empty()) report.written.push_back(r.record_noise);
  clock.stop();
  if (!r.sidecar.empty()) {
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    for (int64_t i = 0; i < items; ++i) {
      Json json = sidecar_json(item_requests[static_cast<size_t>(i)], report, total);
      json["batch"] = Json{{"item", i}, {"items", items}, {"samples_per_prompt", r.batch}};
      const std::string text_json = json.dump(2) + "\n";
      io::AtomicFile f(out.file(item_requests[static_cast<size_t>(i)].sidecar));
      f.write(text_json.data(), text_json.size());
      f.commit();
    }
  }
  out.commit();
  return report;
}

}  // namespace ltx::stages
