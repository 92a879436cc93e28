#include "models/gemma3/vision.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

#include "core/error.h"
#include "io/gguf.h"
#include "nn/precision.h"
#include "nn/weight_source_renamed.h"

namespace ltx::gemma3 {
namespace {

constexpr const char* kTower = "vision_tower.vision_model.";
constexpr const char* kProjector = "multi_modal_projector.";

// mmproj names (llama.cpp gguf-py tensor_mapping.py, Gemma3VisionModel) -> HF names, per layer and global.
const std::vector<std::pair<std::string, std::string>>& mmproj_layer_names() {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"ln1", "layer_norm1"},         {"ln2", "layer_norm2"},         {"attn_q", "self_attn.q_proj"},
      {"attn_k", "self_attn.k_proj"}, {"attn_v", "self_attn.v_proj"}, {"attn_out", "self_attn.out_proj"},
      {"ffn_up", "mlp.fc1"},          {"ffn_down", "mlp.fc2"},
  };
  return names;
}
const std::map<std::string, std::string>& mmproj_global_names() {
  static const std::map<std::string, std::string> names = {
      {"v.patch_embd.weight", std::string(kTower) + "embeddings.patch_embedding.weight"},
      {"v.patch_embd.bias", std::string(kTower) + "embeddings.patch_embedding.bias"},
      {"v.position_embd.weight", std::string(kTower) + "embeddings.position_embedding.weight"},
      {"v.post_ln.weight", std::string(kTower) + "post_layernorm.weight"},
      {"v.post_ln.bias", std::string(kTower) + "post_layernorm.bias"},
      {"mm.input_projection.weight", std::string(kProjector) + "mm_input_projection_weight"},
      {"mm.soft_emb_norm.weight", std::string(kProjector) + "mm_soft_emb_norm.weight"},
  };
  return names;
}

// "v.blk.3.attn_q.bias" <-> "vision_tower.vision_model.encoder.layers.3.self_attn.q_proj.bias". `swap_ffn`: the
// early converter (gemma3_convert_encoder_to_gguf.py) wrote fc1 as ffn_down and fc2 as ffn_up, which llama.cpp's
// clip.cpp recognizes by shape; so does this.
std::string mmproj_to_hf(std::string_view file, bool swap_ffn) {
  const std::string name(file);
  if (auto it = mmproj_global_names().find(name); it != mmproj_global_names().end()) return it->second;
  if (name.rfind("v.blk.", 0) != 0) return name;
  const size_t dot = name.find('.', 6);
  if (dot == std::string::npos) return name;
  const std::string layer = name.substr(6, dot - 6), rest = name.substr(dot + 1);
  for (auto [gguf, hf] : mmproj_layer_names()) {
    if (swap_ffn && gguf == "ffn_up")
      gguf = "ffn_down";
    else if (swap_ffn && gguf == "ffn_down")
      gguf = "ffn_up";
    if (rest.rfind(gguf + ".", 0) == 0)
      return std::string(kTower) + "encoder.layers." + layer + "." + hf + rest.substr(gguf.size());
  }
  return name;
}

std::string hf_to_mmproj(std::string_view model, bool swap_ffn) {
  const std::string name(model);
  for (const auto& [gguf, hf] : mmproj_global_names())
    if (hf == name) return gguf;
  const std::string layers = std::string(kTower) + "encoder.layers.";
  if (name.rfind(layers, 0) != 0) return name;
  const size_t dot = name.find('.', layers.size());
  if (dot == std::string::npos) return name;
  const std::string layer = name.substr(layers.size(), dot - layers.size()), rest = name.substr(dot + 1);
  for (auto [gguf, hf] : mmproj_layer_names()) {
    if (swap_ffn && gguf == "ffn_up")
      gguf = "ffn_down";
    else if (swap_ffn && gguf == "ffn_down")
      gguf = "ffn_up";
    if (rest.rfind(hf + ".", 0) == 0) return "v.blk." + layer + "." + gguf + rest.substr(hf.size());
  }
  return name;
}

// The prefix of `suffix` in a HF checkpoint: with or without the "model." newer conversions put before it.
std::string hf_prefix(const WeightSource& source, const std::string& base, const std::string& probe,
                      const std::string& path) {
  for (const std::string& p : {base, "model." + base})
    if (source.contains(p + probe)) return p;
  throw Error("gemma3", path + ": no vision tower (no " + base + probe + "): a text-only Gemma 3 cannot see images");
}

}  // namespace

VisionWeights VisionWeights::load(const VisionConfig& c, std::shared_ptr<const WeightSource> source,
                                  const std::string& tower, const std::string& projector, NormWeight soft_norm,
                                  DType compute) {
  const int64_t d = c.hidden_size, f = c.intermediate_size, p = c.patch_size;
  const auto eps = static_cast<float>(c.layer_norm_eps);
  VisionWeights w;
  const WeightLoader root(source, tower);
  const WeightLoader emb = root.scope("embeddings");
  {
    const WeightLoader conv = emb.scope("patch_embedding");
    w.patch_embedding.name = conv.prefix() + "weight";
    w.patch_embedding.compute = compute;
    const Tensor kernel = conv.get("weight", {d, 3, p, p});
    if (kernel.defined())
      w.patch_embedding.weight = nn::prepare_matrix(kernel.contiguous().reshape({d, 3 * p * p}), compute);
    w.patch_embedding.bias = nn::prepare_vector(conv.get("bias", {d}));
  }
  w.position_embedding = nn::prepare_vector(emb.get("position_embedding.weight", {c.patches(), d}));
  const WeightLoader enc = root.scope("encoder").scope("layers");
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const WeightLoader l = enc.scope(i);
    VisionLayerWeights lw;
    lw.layer_norm1 = nn::LayerNorm::load(l, "layer_norm1", d, eps, true, true);
    lw.layer_norm2 = nn::LayerNorm::load(l, "layer_norm2", d, eps, true, true);
    const WeightLoader a = l.scope("self_attn");
    lw.q_proj = nn::Linear::load(a, "q_proj", d, d, true, compute);
    lw.k_proj = nn::Linear::load(a, "k_proj", d, d, true, compute);
    lw.v_proj = nn::Linear::load(a, "v_proj", d, d, true, compute);
    lw.out_proj = nn::Linear::load(a, "out_proj", d, d, true, compute);
    const WeightLoader m = l.scope("mlp");
    lw.fc1 = nn::Linear::load(m, "fc1", d, f, true, compute);
    lw.fc2 = nn::Linear::load(m, "fc2", f, d, true, compute);
    w.layers.push_back(std::move(lw));
  }
  w.post_layernorm = nn::LayerNorm::load(root, "post_layernorm", d, eps, true, true);
  root.finish();

  const WeightLoader proj(source, projector);
  w.soft_emb_norm = nn::RmsNorm::load(proj, "mm_soft_emb_norm", d, eps, soft_norm);
  const Tensor matrix = proj.get("mm_input_projection_weight", {d, c.text_hidden_size});  // applied as x·W
  proj.finish();
  w.input_projection.name = proj.prefix() + "mm_input_projection_weight";
  w.input_projection.compute = compute;
  w.input_projection.weight = nn::prepare_matrix(matrix.to(DType::F32).transpose(0, 1).contiguous(), compute);
  return w;
}

VisionTower::VisionTower(VisionConfig config, VisionWeights weights, const Backend& backend)
    : config_(std::move(config)), weights_(std::move(weights)), plans_(backend) {}

bool VisionTower::folder_has_vision(const std::string& folder) {
  const std::filesystem::path config = std::filesystem::path(folder) / "config.json";
  return std::filesystem::is_regular_file(config) && VisionConfig::from_hf_file(config.string()).has_value();
}

VisionTower VisionTower::load(const std::string& path, DType compute, const Backend& backend) {
  namespace fs = std::filesystem;
  if (fs::path(path).extension() == ".gguf") {
    const auto file = GGUFFile::open_shared(path);
    VisionConfig c = VisionConfig::from_mmproj(*file);
    // fc1 is the [F, D] matrix: an ffn_down of that shape means the early converter's swapped names.
    const GGUFTensorInfo* down = nullptr;
    for (const GGUFTensorInfo& t : file->tensors())
      if (t.name == "v.blk.0.ffn_down.weight") down = &t;
    const bool swap = down && down->shape.rank() == 2 && down->shape.dim(0) == c.intermediate_size &&
                      down->shape.dim(1) == c.hidden_size;
    auto source = rename_weights(
        open_gguf(path), [swap](std::string_view n) { return hf_to_mmproj(n, swap); },
        [swap](std::string_view n) { return mmproj_to_hf(n, swap); }, "llama.cpp mmproj");
    VisionWeights w = VisionWeights::load(c, source, kTower, kProjector, NormWeight::Plain, compute);
    return VisionTower(std::move(c), std::move(w), backend);
  }
  const fs::path folder = fs::is_directory(path) ? fs::path(path) : fs::path(path).parent_path();
  const std::optional<VisionConfig> c = VisionConfig::from_hf_file((folder / "config.json").string());
  LTX_CHECK(c.has_value(), "gemma3", (folder / "config.json").string(),
            ": no vision_config: a text-only Gemma 3 cannot see images (give a Gemma3ForConditionalGeneration "
            "checkpoint, or an mmproj .gguf beside a GGUF)");
  const auto source = open_safetensors(path);
  const std::string tower = hf_prefix(*source, kTower, "embeddings.patch_embedding.weight", path);
  const std::string projector = hf_prefix(*source, kProjector, "mm_input_projection_weight", path);
  VisionWeights w = VisionWeights::load(*c, source, tower, projector, NormWeight::OnePlus, compute);
  return VisionTower(*c, std::move(w), backend);
}

VisionOutput VisionTower::run(const Tensor& pixel_values) {
  const VisionConfig& c = config_;
  const int64_t s = c.image_size, p = c.patch_size, g = c.grid(), n = c.patches(), d = c.hidden_size;
  LTX_CHECK(pixel_values.shape() == Shape({1, 3, s, s}), "gemma3", "the vision tower reads pixels [1, 3, ", s, ", ", s,
            "], got ", pixel_values.describe());
  Graph graph;
  // Production precision: a matmul against bf16 weights reads bf16 activations and returns to the f32 stream, except
  // q, k and v, which attention reads in bf16 as the reference's bf16 SDPA does (f32 softmax and sums).
  const auto linear = [](const nn::Linear& l, Value x, bool keep_bf16 = false) {
    const Value y = l(nn::to_matmul_input(x, l));
    return y.dtype() == DType::F32 || keep_bf16 ? y : ops::cast(y, DType::F32);
  };
  const Value pixels = graph.input("pixel_values", DType::F32, {1, 3, s, s});
  // SiglipVisionEmbeddings: the stride-P convolution as one matmul over each patch's (channel, row, column)
  // values, patches in row-major order; then the position table (no interpolation, no class token).
  Value patches = ops::reshape(pixels, {3, g, p, g, p});
  patches = ops::reshape(ops::permute(patches, {1, 3, 0, 2, 4}), {1, n, 3 * p * p});
  Value h = ops::add(linear(weights_.patch_embedding, patches),
                     graph.constant("position_embedding", weights_.position_embedding));
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim())));
  for (const VisionLayerWeights& lw : weights_.layers) {
    // SiglipEncoderLayer: pre-LN attention (full, unmasked) and pre-LN MLP, each added to the stream.
    const Value a = lw.layer_norm1(h);
    const Value q = nn::split_heads(linear(lw.q_proj, a, true), c.n_heads);
    const Value k = nn::split_heads(linear(lw.k_proj, a, true), c.n_heads);
    const Value v = nn::split_heads(linear(lw.v_proj, a, true), c.n_heads);
    h = ops::add(h, linear(lw.out_proj, nn::merge_heads(ops::attention(q, k, v, std::nullopt, scale))));
    const Value m = linear(lw.fc2, ops::gelu_tanh(linear(lw.fc1, lw.layer_norm2(h))));
    h = ops::add(h, m);
  }
  h = weights_.post_layernorm(h);
  graph.output(h, "hidden");
  // Gemma3MultiModalProjector: the patch grid average-pooled k x k (token t = the mean of its block of patches),
  // RMSNorm, then the projection to the text width.
  const int64_t side = c.tokens_per_side(), k = c.pool();
  Value pooled = ops::reshape(h, {side, k, side, k, d});
  pooled = ops::reshape(ops::reduce_mean(pooled, std::vector<int>{1, 3}), {1, side * side, d});
  graph.output(linear(weights_.input_projection, weights_.soft_emb_norm(pooled)), "features");

  Plan& plan = plans_.get(graph);
  const std::span<const Tensor> outs = plan.run({pixel_values.contiguous()});
  VisionOutput out;
  const auto& names = plan.output_names();
  for (size_t i = 0; i < names.size(); ++i) (names[i] == "hidden" ? out.hidden : out.features) = outs[i].clone();
  return out;
}

}  // namespace ltx::gemma3
