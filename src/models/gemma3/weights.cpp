#include "models/gemma3/weights.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.h"
#include "core/half.h"
#include "core/quant.h"
#include "core/thread_pool.h"
#include "io/gguf.h"

namespace ltx::gemma3 {
namespace {

// GGUF tensor name -> HF name (llama.cpp gguf-py/gguf/tensor_mapping.py, MODEL_ARCH.GEMMA3). Note "ffn_norm" is
// the *pre*-feed-forward norm and "post_attention_norm" the post-attention one.
std::string hf_name_of(const std::string& gguf) {
  static const std::map<std::string, std::string> globals = {{"token_embd.weight", "model.embed_tokens.weight"},
                                                             {"output_norm.weight", "model.norm.weight"}};
  static const std::map<std::string, std::string> block = {
      {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_output.weight", "self_attn.o_proj.weight"},
      {"attn_q_norm.weight", "self_attn.q_norm.weight"},
      {"attn_k_norm.weight", "self_attn.k_norm.weight"},
      {"attn_norm.weight", "input_layernorm.weight"},
      {"post_attention_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
      {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  if (auto it = globals.find(gguf); it != globals.end()) return it->second;
  if (gguf.rfind("blk.", 0) == 0) {
    const size_t dot = gguf.find('.', 4);
    if (dot != std::string::npos) {
      const std::string layer = gguf.substr(4, dot - 4);
      if (auto it = block.find(gguf.substr(dot + 1));
          it != block.end() && !layer.empty() && std::all_of(layer.begin(), layer.end(), ::isdigit))
        return "model.layers." + layer + "." + it->second;
    }
  }
  return gguf;
}

class GgufAsHf : public WeightSource {
 public:
  explicit GgufAsHf(const std::string& path) : file_(GGUFFile::open_shared(path)), path_(path) {
    for (size_t i = 0; i < file_->tensors().size(); ++i) {
      const std::string hf = hf_name_of(file_->tensors()[i].name);
      LTX_CHECK(index_.emplace(hf, i).second, "gemma3", path, ": two tensors map to ", hf);
      names_.push_back(hf);
    }
    std::sort(names_.begin(), names_.end());
  }
  std::vector<std::string> names() const override { return names_; }
  bool contains(std::string_view name) const override { return index_.count(std::string(name)) != 0; }
  DType dtype(std::string_view name) const override {
    const GGUFTensorInfo& t = info(name);
    LTX_CHECK(t.dtype.has_value(), "gguf", path_, ": tensor '", t.name, "' has unsupported ggml type ",
              ggml_type_name(t.ggml_type));
    return *t.dtype;
  }
  Shape shape(std::string_view name) const override { return info(name).shape; }
  Tensor get(std::string_view name) const override { return file_->get(info(name).name); }
  const std::map<std::string, std::string>& metadata() const override { return empty_; }
  std::string describe() const override { return path_; }

 private:
  const GGUFTensorInfo& info(std::string_view name) const {
    auto it = index_.find(std::string(name));
    LTX_CHECK(it != index_.end(), "weights", path_, ": no tensor '", name, "'");
    return file_->tensors()[it->second];
  }
  std::shared_ptr<const GGUFFile> file_;
  std::string path_;
  std::map<std::string, size_t> index_;
  std::vector<std::string> names_;
  std::map<std::string, std::string> empty_;
};

}  // namespace

Tensor dequantize_matrix(const Tensor& q, DType to) {
  Tensor out = Tensor::empty(to, {q.dim(0), q.dim(1)});
  dequantize_matrix_into(q, out);
  return out;
}

void dequantize_matrix_into(const Tensor& q, const Tensor& out) {
  const int64_t rows = q.dim(0), cols = q.dim(1);
  const DType to = out.dtype();
  LTX_CHECK(out.shape() == Shape({rows, cols}) && out.is_contiguous() && (to == DType::F32 || to == DType::BF16),
            "gemma3", "decoding ", q.describe(), " into ", out.describe());
  const int64_t row_bytes = q.strides()[0] / static_cast<int64_t>(dtype_block_elems(q.dtype())) *
                            static_cast<int64_t>(dtype_block_bytes(q.dtype()));
  parallel_for(rows, 16, [&](int64_t r0, int64_t r1) {
    std::vector<float> line(to == DType::F32 ? 0 : static_cast<size_t>(cols));
    for (int64_t r = r0; r < r1; ++r) {
      const std::byte* src = q.raw() + r * row_bytes;
      if (to == DType::F32) {
        dequantize_row(q.dtype(), src, out.data<float>() + r * cols, cols);
        continue;
      }
      dequantize_row(q.dtype(), src, line.data(), cols);
      uint16_t* dst = out.data<uint16_t>() + r * cols;
      for (int64_t c = 0; c < cols; ++c) dst[c] = f32_to_bf16(line[static_cast<size_t>(c)]);
    }
  });
}

std::vector<nn::Linear*> quantized_layer_matrices(Weights& w, DType to, int64_t budget_bytes) {
  std::vector<nn::Linear*> quantized;
  int64_t bytes = 0;
  for (LayerWeights& l : w.layers)
    for (nn::Linear* m : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
      if (dtype_is_quantized(m->weight.dtype())) {
        quantized.push_back(m);
        bytes += m->weight.numel() * static_cast<int64_t>(dtype_block_bytes(to));
      }
  LTX_CHECK(to == DType::F32 || to == DType::BF16, "gemma3", "quantized matrices decode to f32 or bf16, not ",
            dtype_name(to));
  if (bytes > budget_bytes) quantized.clear();
  return quantized;
}

void dequantize_layer_matrices(Weights& w, DType to, int64_t budget_bytes) {
  for (nn::Linear* m : quantized_layer_matrices(w, to, budget_bytes)) m->weight = dequantize_matrix(m->weight, to);
}

std::shared_ptr<WeightSource> open_gguf_as_hf(const std::string& path) { return std::make_shared<GgufAsHf>(path); }

std::string detect_hf_root(const WeightSource& source) {
  for (const char* root : {"language_model.model.", "model.language_model.", "model."})
    if (source.contains(std::string(root) + "embed_tokens.weight")) return root;
  fail("gemma3", source.describe() +
                     ": no Gemma-3 text model found (no embed_tokens.weight under "
                     "language_model.model., model.language_model. or model.)");
}

Weights Weights::load(const Config& c, std::shared_ptr<const WeightSource> source, const std::string& root,
                      DType compute) {
  const WeightLoader top(source);
  // Parts of a Gemma3ForConditionalGeneration / ForCausalLM checkpoint that the text encoder does not use.
  for (const char* p : {"vision_tower.", "multi_modal_projector.", "model.vision_tower.",
                        "model.multi_modal_projector.", "lm_head.", "language_model.lm_head."})
    top.ignore(p);
  const WeightLoader m = top.scope(root.substr(0, root.size() - 1));
  const int64_t d = c.hidden_size, hd = c.head_dim, ff = c.intermediate_size;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const NormWeight form = c.norm_one_plus ? NormWeight::OnePlus : NormWeight::Plain;
  Weights w;
  w.embed_tokens = nn::prepare_matrix(m.get("embed_tokens.weight", {c.vocab_size, d}), compute);
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const WeightLoader l = m.scope("layers").scope(i);
    LayerWeights lw;
    lw.input_layernorm = nn::RmsNorm::load(l, "input_layernorm", d, eps, form);
    lw.post_attention_layernorm = nn::RmsNorm::load(l, "post_attention_layernorm", d, eps, form);
    lw.pre_feedforward_layernorm = nn::RmsNorm::load(l, "pre_feedforward_layernorm", d, eps, form);
    lw.post_feedforward_layernorm = nn::RmsNorm::load(l, "post_feedforward_layernorm", d, eps, form);
    const WeightLoader a = l.scope("self_attn");
    lw.q_proj = nn::Linear::load(a, "q_proj", d, c.n_heads * hd, false, compute);
    lw.k_proj = nn::Linear::load(a, "k_proj", d, c.n_kv_heads * hd, false, compute);
    lw.v_proj = nn::Linear::load(a, "v_proj", d, c.n_kv_heads * hd, false, compute);
    lw.o_proj = nn::Linear::load(a, "o_proj", c.n_heads * hd, d, false, compute);
    lw.q_norm = nn::RmsNorm::load(a, "q_norm", hd, eps, form);
    lw.k_norm = nn::RmsNorm::load(a, "k_norm", hd, eps, form);
    const WeightLoader f = l.scope("mlp");
    lw.gate_proj = nn::Linear::load(f, "gate_proj", d, ff, false, compute);
    lw.up_proj = nn::Linear::load(f, "up_proj", d, ff, false, compute);
    lw.down_proj = nn::Linear::load(f, "down_proj", ff, d, false, compute);
    w.layers.push_back(std::move(lw));
  }
  w.norm = nn::RmsNorm::load(m, "norm", d, eps, form);
  top.finish();
  return w;
}

}  // namespace ltx::gemma3
