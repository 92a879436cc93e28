#include "stages/loaded_models.h"

#include <algorithm>
#include <filesystem>
#include <future>

#include "core/cache_dir.h"
#include "core/error.h"
#include "models/ltx/dit/dit_checkpoint.h"
#include "stages/default_model.h"

namespace ltx::stages {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOfficialDitRoot = "model.diffusion_model.";

bool is_gguf(const std::string& path) { return fs::path(path).extension() == ".gguf"; }

// A GGUF DiT without its own `config` entry takes --dit-config, else the official checkpoint's config.
std::string dit_config_path(const ModelFiles& f) {
  if (!f.dit_config.empty() || !is_gguf(f.dit)) return f.dit_config;
  return open_gguf(f.dit)->metadata().count("config") ? "" : f.checkpoint;
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

// The DiT a --dit file holds must take the latents and contexts the checkpoint's other parts make.
void check_dit_fits(const ltxm::DitCheckpoint& dit, const AvModels& models, const ModelFiles& f) {
  const ltxm::DitConfig own =
      ltxm::DitConfig::from_metadata(models.config.at("transformer"), ltxm::DitModelType::AudioVideo);
  const int64_t vae_channels = models.video_stats.mean.numel();
  LTX_CHECK(dit.config.in_channels == vae_channels && dit.config.audio_in_channels == own.audio_in_channels, "generate",
            "the DiT of ", f.dit, " takes ", dit.config.in_channels, " video and ", dit.config.audio_in_channels,
            " audio latent channels but ", f.checkpoint, " makes ", vae_channels, " and ", own.audio_in_channels,
            ": --dit and --checkpoint must be the same model");
}

// Stored bytes of the tensors under `prefix`, except those under any of `except`.
size_t stored_bytes(const WeightSource& w, const std::string& prefix, const std::vector<std::string>& except = {}) {
  size_t bytes = 0;
  for (const std::string& n : w.names()) {
    if (n.rfind(prefix, 0) != 0) continue;
    if (std::any_of(except.begin(), except.end(), [&](const std::string& e) { return n.rfind(e, 0) == 0; })) continue;
    bytes += dtype_bytes_for(w.dtype(n), w.shape(n).numel());
  }
  return bytes;
}

size_t file_bytes(const std::string& path) {
  if (!fs::is_directory(path)) return static_cast<size_t>(fs::file_size(path));
  size_t bytes = 0;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") bytes += static_cast<size_t>(e.file_size());
  return bytes;
}

// The embeddings connectors under a DiT root: stored with the DiT, they run in the text-encoder phase.
std::vector<std::string> connector_prefixes(const std::string& root) {
  return {root + "video_embeddings_connector.", root + "audio_embeddings_connector.", root + "embeddings_connector."};
}

PhaseWeights phase_weights(const LoadedModels& m, const WeightSource& dit_weights, const std::string& dit_root) {
  PhaseWeights w;
  w.transformer = stored_bytes(dit_weights, dit_root, connector_prefixes(dit_root));
  w.decoders = stored_bytes(*m.checkpoint, "vae.") + stored_bytes(*m.checkpoint, "audio_vae.") +
               stored_bytes(*m.checkpoint, "vocoder.");
  if (m.lora && m.lora->application() == ltxm::LoraApplication::Unfused) {  // mapped, read beside each layer
    for (const auto& l : m.files.loras) w.transformer += file_bytes(l.path);
    if (m.files.distilled_lora) w.transformer += file_bytes(m.files.distilled_lora->path);
  }
  if (!m.files.upsampler.empty()) w.upsampler = file_bytes(m.files.upsampler);
  if (m.encoder) {
    // The connectors run from the checkpoint (text_encoder.cpp), under its own root whatever file the DiT is from.
    w.text_encoder_unstreamed = stored_bytes(*m.checkpoint, "text_embedding_projection.");
    for (const std::string& prefix : connector_prefixes(kOfficialDitRoot))
      w.text_encoder_unstreamed += stored_bytes(*m.checkpoint, prefix);
    w.text_encoder = file_bytes(m.files.text_encoder) + w.text_encoder_unstreamed;
    const gemma3::Config& c = m.encoder->model().config();
    w.text_bytes_per_token = static_cast<size_t>(c.n_hidden_states() * c.hidden_size * 4 + 3 * c.intermediate_size * 2);
  }
  return w;
}

}  // namespace

std::vector<std::string> model_file_problems(const ModelFiles& f) {
  std::vector<std::string> problems;
  auto need_file = [&](const std::string& path, const char* what) {
    if (!path.empty() && !fs::exists(path)) problems.push_back(std::string(what) + " " + path + " does not exist");
  };
  if (f.checkpoint.empty()) problems.push_back("a checkpoint (--checkpoint) is required");
  need_file(f.checkpoint, "checkpoint");
  if (!f.checkpoint.empty() && (fs::is_directory(f.checkpoint) || is_gguf(f.checkpoint)))
    problems.push_back("--checkpoint " + f.checkpoint +
                       " is a DiT only (Diffusers folder or GGUF); the video VAE, audio VAE, vocoder and text "
                       "projection come from the official single-file checkpoint: give that as --checkpoint and this "
                       "as --dit");
  need_file(f.dit, "DiT");
  need_file(f.dit_config, "DiT config");
  if (!f.dit_config.empty() && f.dit.empty()) problems.push_back("--dit-config needs --dit");
  for (const auto& l : f.loras) need_file(l.path, "LoRA");
  if (f.distilled_lora) need_file(f.distilled_lora->path, "distilled LoRA");
  need_file(f.text_encoder, "text encoder");
  if (!f.text_encoder.empty() && fs::is_directory(f.text_encoder))
    for (const char* part : {"config.json", "tokenizer.json"})
      if (!fs::is_regular_file(fs::path(f.text_encoder) / part))
        problems.push_back("the Gemma 3 folder " + f.text_encoder + " has no " + part +
                           " (a Hugging Face download of google/gemma-3-12b-it has config.json, tokenizer.json and "
                           "the model*.safetensors shards with their index)");
  need_file(f.upsampler, "upsampler");
  need_file(f.text_encoder_mmproj, "text encoder mmproj");
  if (!f.text_encoder_mmproj.empty() && f.text_encoder.empty())
    problems.push_back("--mmproj is the vision tower of a text encoder: it needs --text-encoder");
  return problems;
}

std::unique_ptr<LoadedModels> load_models(const ModelFiles& f, ProgressReporter* progress) {
  if (const std::vector<std::string> problems = model_file_problems(f); !problems.empty()) {
    std::string joined;
    for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
    fail("generate", joined);
  }
  auto m = std::make_unique<LoadedModels>();
  m->files = f;
  m->progress = progress;
  // The tokenizer's thread first: it is the longest load, and overlaps all the others.
  std::future<gemma3::Tokenizer> tokenizer;
  if (!f.text_encoder.empty()) tokenizer = PromptEncoder::start_tokenizer(f.text_encoder);
  m->checkpoint = open_safetensors(f.checkpoint);
  check_checkpoint_parts(*m->checkpoint, f.checkpoint, f.dit.empty());
  // The DiT: the checkpoint's own, or --dit in any layout open_dit_checkpoint reads.
  std::optional<ltxm::DitCheckpoint> dit;
  std::shared_ptr<const WeightSource> dit_weights = m->checkpoint;
  std::string dit_root = kOfficialDitRoot;
  if (!f.dit.empty()) {
    dit = ltxm::open_dit_checkpoint(f.dit, ltxm::DitModelType::AudioVideo, dit_config_path(f));
    dit_weights = dit->weights;
    dit_root = dit->root;
  }
  // LoRA files are read against the DiT file's layer list before anything heavy is loaded.
  const LoraRequest lora_request{.loras = f.loras,
                                 .distilled_lora = f.distilled_lora,
                                 .allow_partial = f.lora_allow_partial,
                                 .application = f.lora_application,
                                 .memory_budget_bytes = f.memory_budget_bytes,
                                 .distilled_stage1_strength = f.distilled_lora_stage1_strength};
  std::vector<ltxm::LoraAdapter> adapters;
  if (!f.loras.empty() || f.distilled_lora)
    adapters = read_loras(lora_request, checkpoint_lora_targets(*dit_weights, dit_root));
  std::vector<std::string> lora_paths;
  for (const ltxm::LoraSpec& l : f.loras) lora_paths.push_back(l.path);
  m->ic_lora = read_ic_lora_metadata(lora_paths);
  const Backend& backend = backend_named(f.backend, f.xla_plugin);
  m->models = load_av_models(m->checkpoint, f.compute, backend, {.dit = !dit});
  if (dit) {
    check_dit_fits(*dit, m->models, f);
    m->models.dit = std::make_unique<ltxm::Dit>(ltxm::Dit::load(dit->loader(), dit->config, f.compute, backend));
  }
  if (!adapters.empty()) {
    LoadedModels* self = m.get();  // lives in the unique_ptr: the address stays
    m->lora = std::make_unique<LoraWeights>(
        *m->models.dit, dit_weights, f.compute, lora_request,
        [self](const std::string& line) {
          if (self->progress) self->progress->note(line);
        },
        dit_root, std::move(adapters));
  }
  if (!f.upsampler.empty()) m->upsampler = load_upsampler(open_safetensors(f.upsampler), f.compute);
  if (!f.text_encoder.empty())
    m->encoder = PromptEncoder::load(f.text_encoder, std::move(tokenizer), m->checkpoint,
                                     m->models.config.at("transformer"), f.compute, backend, prepared_cache_dir());
  if (m->encoder && !f.text_encoder_mmproj.empty()) m->encoder->set_vision_file(f.text_encoder_mmproj);
  m->weight_bytes = phase_weights(*m, *dit_weights, dit_root);
  m->progress = nullptr;  // each call sets its own
  return m;
}

}  // namespace ltx::stages
