#include "models/gemma3/config.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "io/gguf.h"

namespace ltx::gemma3 {
namespace {

// layer i is full attention iff (i + 1) % pattern == 0 (Gemma3TextConfig.__post_init__, default pattern 6).
std::vector<LayerType> pattern_layer_types(int64_t n_layers, int64_t pattern) {
  LTX_CHECK(n_layers >= 1 && n_layers <= (int64_t{1} << 24), "gemma3",
            "config: the layer count must be in [1, 2^24], got ", n_layers);
  std::vector<LayerType> types;
  for (int64_t i = 0; i < n_layers; ++i) types.push_back((i + 1) % pattern == 0 ? LayerType::Full : LayerType::Sliding);
  return types;
}

// The linear factor of a rope_scaling / rope_parameters["full_attention"] object; other scaling types are refused.
double linear_factor(const Json& scaling, const char* where) {
  if (scaling.is_null()) return 1.0;
  const std::string type = scaling.value("rope_type", scaling.value("type", std::string("default")));
  if (type == "default") return 1.0;
  LTX_CHECK(type == "linear", "gemma3", "config: ", where, " rope type '", type, "' is not supported (linear only)");
  return scaling.at("factor").get<double>();
}

// Every size positive and the heads grouped evenly, before anything divides by them or allocates from them.
void check_sizes(const Config& c) {
  for (const auto& [name, v] : {std::pair<const char*, int64_t>{"vocab_size", c.vocab_size},
                                {"hidden_size", c.hidden_size},
                                {"intermediate_size", c.intermediate_size},
                                {"num_hidden_layers", c.n_layers},
                                {"num_attention_heads", c.n_heads},
                                {"num_key_value_heads", c.n_kv_heads},
                                {"head_dim", c.head_dim}})
    LTX_CHECK(v >= 1 && v <= (int64_t{1} << 24), "gemma3", "config: ", name, " must be in [1, 2^24], got ", v);
  LTX_CHECK(c.sliding_window >= 0, "gemma3", "config: sliding_window must be >= 0, got ", c.sliding_window);
  LTX_CHECK(c.query_pre_attn_scalar > 0 && c.rms_norm_eps > 0 && c.rope_theta > 0 && c.rope_local_base_freq > 0 &&
                c.rope_linear_factor > 0,
            "gemma3", "config: query_pre_attn_scalar, rms_norm_eps, the RoPE bases and the scaling factor must be > 0");
  LTX_CHECK(c.n_heads % c.n_kv_heads == 0, "gemma3", "config: ", c.n_heads, " heads not a multiple of ", c.n_kv_heads,
            " kv heads");
}

}  // namespace

Config Config::from_hf_json(const Json& root) {
  return read_json_fields("gemma3", "config.json", [&] {
    const Json& j = root.contains("text_config") ? root.at("text_config") : root;
    Config c;
    c.vocab_size = j.value("vocab_size", c.vocab_size);
    c.hidden_size = j.value("hidden_size", c.hidden_size);
    c.intermediate_size = j.value("intermediate_size", c.intermediate_size);
    c.n_layers = j.value("num_hidden_layers", c.n_layers);
    c.n_heads = j.value("num_attention_heads", c.n_heads);
    c.n_kv_heads = j.value("num_key_value_heads", c.n_kv_heads);
    c.head_dim = j.value("head_dim", c.head_dim);
    c.query_pre_attn_scalar = j.value("query_pre_attn_scalar", c.query_pre_attn_scalar);
    c.rms_norm_eps = j.value("rms_norm_eps", c.rms_norm_eps);
    if (j.contains("sliding_window") && !j.at("sliding_window").is_null()) c.sliding_window = j.at("sliding_window");
    c.context_length = j.value("max_position_embeddings", c.context_length);
    LTX_CHECK(!j.value("use_bidirectional_attention", false), "gemma3",
              "config: use_bidirectional_attention is not supported");
    for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
      LTX_CHECK(!j.contains(key) || j.at(key).is_null(), "gemma3", "config: ", key, " is not supported");
    // transformers <= 4.5x: rope_theta, rope_local_base_freq, rope_scaling; v5: rope_parameters per layer type.
    if (j.contains("rope_parameters") && j.at("rope_parameters").is_object()) {
      const Json& rp = j.at("rope_parameters");
      if (rp.contains("full_attention")) {
        c.rope_theta = rp.at("full_attention").value("rope_theta", c.rope_theta);
        c.rope_linear_factor = linear_factor(rp.at("full_attention"), "full_attention");
      }
      if (rp.contains("sliding_attention")) {
        c.rope_local_base_freq = rp.at("sliding_attention").value("rope_theta", c.rope_local_base_freq);
        LTX_CHECK(linear_factor(rp.at("sliding_attention"), "sliding_attention") == 1.0, "gemma3",
                  "config: scaled RoPE on sliding layers is not supported");
      }
    } else {
      c.rope_theta = j.value("rope_theta", c.rope_theta);
      c.rope_local_base_freq = j.value("rope_local_base_freq", c.rope_local_base_freq);
      if (j.contains("rope_scaling")) c.rope_linear_factor = linear_factor(j.at("rope_scaling"), "rope_scaling");
    }
    if (j.contains("layer_types") && !j.at("layer_types").is_null()) {
      for (const auto& t : j.at("layer_types")) {
        const std::string s = t.get<std::string>();
        LTX_CHECK(s == "sliding_attention" || s == "full_attention", "gemma3", "config: unknown layer type '", s, "'");
        c.layer_types.push_back(s == "full_attention" ? LayerType::Full : LayerType::Sliding);
      }
      LTX_CHECK(static_cast<int64_t>(c.layer_types.size()) == c.n_layers, "gemma3", "config: ", c.layer_types.size(),
                " layer_types for ", c.n_layers, " layers");
    } else {
      const int64_t pattern = j.value("sliding_window_pattern", int64_t{6});
      LTX_CHECK(pattern >= 1, "gemma3", "config: sliding_window_pattern must be at least 1, got ", pattern);
      c.layer_types = pattern_layer_types(c.n_layers, pattern);
    }
    check_sizes(c);
    return c;
  });
}

Config Config::from_hf_file(const std::string& path) { return from_hf_json(read_json_file(path, "gemma3")); }

// GGUF keys as llama.cpp's converter writes them for arch "gemma3" (gguf-py constants.py). The file carries no
// local RoPE base, layer pattern or query_pre_attn_scalar: llama.cpp hard-codes them (10000, every 6th layer
// global, head_dim except 27B's hidden/heads), and so do we.
Config Config::from_gguf(const GGUFFile& f) {
  const std::string arch = f.value("general.architecture").as_string();
  LTX_CHECK(arch == "gemma3", "gemma3", f.path(), ": architecture '", arch, "', expected gemma3");
  const auto get_int = [&](const char* key) { return f.value(std::string("gemma3.") + key).as_int(); };
  Config c;
  c.hidden_size = get_int("embedding_length");
  c.intermediate_size = get_int("feed_forward_length");
  c.n_layers = get_int("block_count");
  c.n_heads = get_int("attention.head_count");
  c.n_kv_heads = get_int("attention.head_count_kv");
  LTX_CHECK(c.n_heads >= 1, "gemma3", f.path(), ": attention.head_count must be at least 1, got ", c.n_heads);
  c.head_dim = f.find("gemma3.attention.key_length") ? get_int("attention.key_length") : c.hidden_size / c.n_heads;
  c.rms_norm_eps = f.value("gemma3.attention.layer_norm_rms_epsilon").as_float();
  c.rope_theta = f.find("gemma3.rope.freq_base") ? f.value("gemma3.rope.freq_base").as_float() : 1e6;
  c.rope_local_base_freq = 1e4;
  if (const GGUFValue* type = f.find("gemma3.rope.scaling.type"); type && type->as_string() != "none") {
    LTX_CHECK(type->as_string() == "linear", "gemma3", f.path(), ": rope scaling '", type->as_string(),
              "' is not supported");
    c.rope_linear_factor = f.value("gemma3.rope.scaling.factor").as_float();
  }
  c.sliding_window = get_int("attention.sliding_window");
  if (f.find("gemma3.context_length")) c.context_length = get_int("context_length");
  c.query_pre_attn_scalar = c.n_layers == 62 ? double(c.hidden_size / c.n_heads) : double(c.head_dim);
  c.layer_types = pattern_layer_types(c.n_layers, 6);
  c.vocab_size = f.info("token_embd.weight").shape.dim(0);
  c.norm_one_plus = false;
  check_sizes(c);
  return c;
}

float Config::attention_scale() const { return static_cast<float>(1.0 / std::sqrt(query_pre_attn_scalar)); }

std::string Config::describe() const {
  std::ostringstream s;
  s << "gemma3: " << n_layers << " layers, hidden " << hidden_size << ", ffn " << intermediate_size << ", heads "
    << n_heads << "/" << n_kv_heads << "x" << head_dim << ", vocab " << vocab_size << ", window " << sliding_window
    << ", rope " << rope_local_base_freq << "/" << rope_theta << " (x" << rope_linear_factor << ")";
  return s.str();
}

}  // namespace ltx::gemma3
