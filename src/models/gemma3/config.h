// Gemma-3 text model configuration, read from a Hugging Face config.json (text-only Gemma3ForCausalLM or the
// `text_config` of Gemma3ForConditionalGeneration) or from GGUF metadata (`gemma3.*`). Fields missing from a
// file take Gemma3TextConfig's class defaults (transformers models/gemma3/configuration_gemma3.py), as the sparse
// 4B/12B config.json files on the Hub rely on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/json.h"

namespace ltx {

class GGUFFile;

namespace gemma3 {

enum class LayerType : uint8_t { Sliding, Full };

struct Config {
  int64_t vocab_size = 262208;  // embedding rows
  int64_t hidden_size = 2304;
  int64_t intermediate_size = 9216;
  int64_t n_layers = 26;
  int64_t n_heads = 8;
  int64_t n_kv_heads = 4;
  int64_t head_dim = 256;
  double query_pre_attn_scalar = 256;
  double rms_norm_eps = 1e-6;
  double rope_theta = 1e6;            // global (full-attention) layers
  double rope_local_base_freq = 1e4;  // sliding layers, never scaled
  double rope_linear_factor = 1.0;    // global layers only: inv_freq / factor ("linear" rope_scaling)
  int64_t sliding_window = 4096;
  int64_t context_length = 131072;     // the positions it was trained for (max_position_embeddings)
  std::vector<LayerType> layer_types;  // one per layer
  // Norm weights as stored: HF checkpoints store w and compute x·(1+w); the GGUF converter stores 1+w
  // (llama.cpp convert_hf_to_gguf.py, Gemma3Model.modify_tensors), so GGUF norms multiply plainly.
  bool norm_one_plus = true;

  // A config.json object: either a text config or one holding "text_config".
  static Config from_hf_json(const Json& j);
  static Config from_hf_file(const std::string& path);
  static Config from_gguf(const GGUFFile& file);

  float attention_scale() const;  // query_pre_attn_scalar^-0.5
  int64_t n_hidden_states() const { return n_layers + 1; }
  std::string describe() const;
};

}  // namespace gemma3
}  // namespace ltx
