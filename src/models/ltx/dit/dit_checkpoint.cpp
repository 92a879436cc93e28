#include "models/ltx/dit/dit_checkpoint.h"

#include <filesystem>

#include "core/error.h"
#include "models/ltx/dit/dit_keys.h"
#include "nn/weight_source_renamed.h"

namespace ltx::ltxm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOfficialPrefix = "model.diffusion_model.";

bool is_diffusers_config(const Json& j) { return j.is_object() && j.contains("_class_name"); }

// The official "transformer" dict from a checkpoint `config` (or that dict itself).
Json transformer_dict(const Json& config, const std::string& where) {
  if (config.is_object() && config.contains("transformer")) return config.at("transformer");
  LTX_CHECK(config.is_object() && config.contains("num_layers"), "ltx.dit", where,
            ": neither a checkpoint config ({\"transformer\": {...}}) nor a transformer config");
  return config;
}

DitConfig config_from_file(const std::string& path, DitModelType type) {
  if (fs::path(path).extension() == ".safetensors")
    return DitConfig::from_metadata(transformer_dict(metadata_json(*open_safetensors(path), "config"), path), type);
  const Json j = read_json_file(path, "ltx.dit");
  if (is_diffusers_config(j)) return DitConfig::from_diffusers(j);
  return DitConfig::from_metadata(transformer_dict(j, path), type);
}

// The folder holding a Diffusers transformer: `path` itself or its transformer/ subfolder; empty when neither.
fs::path diffusers_folder(const fs::path& path) {
  for (const fs::path& dir : {path, path / "transformer"})
    if (fs::is_regular_file(dir / "config.json") &&
        is_diffusers_config(read_json_file((dir / "config.json").string(), "ltx.dit")))
      return dir;
  return {};
}

DitCheckpoint open_diffusers(const fs::path& dir) {
  std::vector<std::string> shards;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".safetensors" &&
        e.path().filename().string().rfind("diffusion_pytorch_model", 0) == 0)
      shards.push_back(e.path().string());
  std::sort(shards.begin(), shards.end());
  LTX_CHECK(!shards.empty(), "ltx.dit", dir.string(), ": no diffusion_pytorch_model*.safetensors in this folder");
  // With its index the shards are the ones it names, each checked (open_safetensors on the folder).
  const bool indexed = fs::is_regular_file(dir / "diffusion_pytorch_model.safetensors.index.json");
  DitCheckpoint c;
  c.weights = rename_weights(indexed ? open_safetensors(dir.string()) : open_safetensors(shards), dit_key_to_diffusers,
                             dit_key_from_diffusers, "Diffusers");
  c.config = DitConfig::from_diffusers(read_json_file((dir / "config.json").string(), "ltx.dit"));
  c.layout = DitLayout::Diffusers;
  return c;
}

// ComfyUI-GGUF strips model.diffusion_model. when converting (tools/convert.py strip_prefix) but its loader
// accepts both; so do we.
std::string gguf_root(const WeightSource& w) {
  for (const std::string& name : w.names())
    if (name.rfind(kOfficialPrefix, 0) == 0) return kOfficialPrefix;
  return "";
}

}  // namespace

DitCheckpoint open_dit_checkpoint(const std::string& path, DitModelType type, const std::string& config_path) {
  LTX_CHECK(fs::exists(path), "ltx.dit", path, ": no such file or folder");
  DitCheckpoint c;
  if (fs::is_directory(path)) {
    const fs::path dir = diffusers_folder(path);
    LTX_CHECK(!dir.empty(), "ltx.dit", path,
              ": not a Diffusers LTX-2 transformer folder (no config.json of LTX2VideoTransformer3DModel here or in "
              "transformer/)");
    c = open_diffusers(dir);
  } else if (fs::path(path).extension() == ".gguf") {
    c.weights = open_gguf(path);
    c.root = gguf_root(*c.weights);
    c.layout = DitLayout::Gguf;
    if (config_path.empty()) {
      LTX_CHECK(c.weights->metadata().count("config"), "ltx.dit", path,
                ": this GGUF carries no `config` entry; give the model's configuration with --dit-config (the official "
                "checkpoint, its config JSON, or a Diffusers config.json)");
      c.config = DitConfig::from_metadata(transformer_dict(metadata_json(*c.weights, "config"), path), type);
    }
  } else {
    c.weights = open_safetensors(path);
    c.root = kOfficialPrefix;
    if (config_path.empty())
      c.config = DitConfig::from_metadata(transformer_dict(metadata_json(*c.weights, "config"), path), type);
  }
  if (!config_path.empty()) c.config = config_from_file(config_path, type);
  return c;
}

}  // namespace ltx::ltxm
