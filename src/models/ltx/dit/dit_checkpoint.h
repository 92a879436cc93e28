// Opening a DiT in any layout ltx reads, with its configuration:
// - an official single-file checkpoint (.safetensors; keys under model.diffusion_model., config from its `config`
//   metadata), bf16/f32 or fp8 (F8_E4M3 Linear weights with per-tensor weight_scale, kept 1 byte resident);
// - a Diffusers folder (`transformer/` with config.json and diffusion_pytorch_model*.safetensors shards, or the
//   pipeline folder above it), renamed onto the official names (dit_keys.h), config from its config.json;
// - a GGUF file as ComfyUI-GGUF's tools/convert.py writes them (official names, optionally with the
//   model.diffusion_model. prefix; block-quantized matrices stay quantized), configured from its `config` string
//   entry when it has one, else from `config_path`.
// `config_path`, when given, overrides: a JSON file holding the checkpoint `config` ({"transformer": {...}}) or
// just its "transformer" dict, or a Diffusers config.json, or an official .safetensors checkpoint whose metadata
// config is used (its tensors are not read).
#pragma once

#include <memory>
#include <string>

#include "models/ltx/dit/dit_config.h"
#include "nn/weight_loader.h"

namespace ltx::ltxm {

enum class DitLayout { Official, Diffusers, Gguf };

struct DitCheckpoint {
  std::shared_ptr<const WeightSource> weights;  // official names
  std::string root;                             // prefix of the DiT's keys in `weights`
  DitConfig config;
  DitLayout layout = DitLayout::Official;

  WeightLoader loader() const { return WeightLoader(weights, root); }
};

DitCheckpoint open_dit_checkpoint(const std::string& path, DitModelType type = DitModelType::AudioVideo,
                                  const std::string& config_path = "");

}  // namespace ltx::ltxm
