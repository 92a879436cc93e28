// Test mmproj files: a Gemma 3 vision tower written as llama.cpp's convert_hf_to_gguf.py writes one (Gemma3VisionModel:
// `v.*` and `mm.*` names, the soft-embedding norm stored as 1 + w, f32 tensors), from values given under the Hugging
// Face names.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "synth/gguf_writer.h"

namespace ltx::gemma3::testing {

struct MmprojSizes {
  int64_t hidden = 32, ffn = 48, layers = 2, heads = 2, image = 84, patch = 14, pool = 2, text = 32;
};

// Values of the HF tensor `name` of `shape` (row-major, the torch layout).
using HfValues = std::function<std::vector<float>(const std::string& name, const Shape& shape)>;

// `legacy_ffn`: fc1 written as ffn_down and fc2 as ffn_up, as the early gemma3_convert_encoder_to_gguf.py did.
inline void write_mmproj(const std::string& path, const MmprojSizes& s, const HfValues& values,
                         bool legacy_ffn = false) {
  synth::GGUFWriter w;
  w.add_string("general.architecture", "clip");
  w.add_string("clip.projector_type", "gemma3");
  w.add_bool("clip.has_vision_encoder", true);
  w.add_u32("clip.vision.image_size", static_cast<uint32_t>(s.image));
  w.add_u32("clip.vision.patch_size", static_cast<uint32_t>(s.patch));
  w.add_u32("clip.vision.embedding_length", static_cast<uint32_t>(s.hidden));
  w.add_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(s.ffn));
  w.add_u32("clip.vision.projection_dim", static_cast<uint32_t>(s.text));
  w.add_u32("clip.vision.block_count", static_cast<uint32_t>(s.layers));
  w.add_u32("clip.vision.attention.head_count", static_cast<uint32_t>(s.heads));
  w.add_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f);
  if (s.pool != 4) w.add_u32("clip.vision.projector.scale_factor", static_cast<uint32_t>(s.pool));
  const auto tensor = [&](const std::string& gguf, const std::string& hf, const Shape& shape, float add = 0.0f) {
    std::vector<float> v = values(hf, shape);
    for (float& x : v) x += add;
    w.add_tensor(gguf, shape, DType::F32, [v](int64_t first, int64_t count, float* out) {
      for (int64_t i = 0; i < count; ++i) out[i] = v[static_cast<size_t>(first + i)];
    });
  };
  const std::string tower = "vision_tower.vision_model.";
  const int64_t d = s.hidden, grid = s.image / s.patch;
  tensor("v.patch_embd.weight", tower + "embeddings.patch_embedding.weight", {d, 3, s.patch, s.patch});
  tensor("v.patch_embd.bias", tower + "embeddings.patch_embedding.bias", {d});
  tensor("v.position_embd.weight", tower + "embeddings.position_embedding.weight", {grid * grid, d});
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string g = "v.blk." + std::to_string(i) + ".", h = tower + "encoder.layers." + std::to_string(i) + ".";
    for (const char* part : {"weight", "bias"}) {
      tensor(g + "ln1." + part, h + "layer_norm1." + part, {d});
      tensor(g + "ln2." + part, h + "layer_norm2." + part, {d});
    }
    for (const auto& [gguf, hf] : {std::pair<std::string, std::string>{"attn_q", "q_proj"},
                                   {"attn_k", "k_proj"},
                                   {"attn_v", "v_proj"},
                                   {"attn_out", "out_proj"}}) {
      tensor(g + gguf + ".weight", h + "self_attn." + hf + ".weight", {d, d});
      tensor(g + gguf + ".bias", h + "self_attn." + hf + ".bias", {d});
    }
    const std::string up = legacy_ffn ? "ffn_down" : "ffn_up", down = legacy_ffn ? "ffn_up" : "ffn_down";
    tensor(g + up + ".weight", h + "mlp.fc1.weight", {s.ffn, d});
    tensor(g + up + ".bias", h + "mlp.fc1.bias", {s.ffn});
    tensor(g + down + ".weight", h + "mlp.fc2.weight", {d, s.ffn});
    tensor(g + down + ".bias", h + "mlp.fc2.bias", {d});
  }
  tensor("v.post_ln.weight", tower + "post_layernorm.weight", {d});
  tensor("v.post_ln.bias", tower + "post_layernorm.bias", {d});
  tensor("mm.input_projection.weight", "multi_modal_projector.mm_input_projection_weight", {d, s.text});
  tensor("mm.soft_emb_norm.weight", "multi_modal_projector.mm_soft_emb_norm.weight", {d}, 1.0f);
  w.write(path);
}

// Seeded values of a plausible scale: norm weights near their identity, matrices ~ 1 / sqrt(fan-in), biases small.
inline std::vector<float> seeded_values(const std::string& name, const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  uint64_t state = std::hash<std::string>{}(name) | 1;
  const double fan_in = shape.rank() >= 2 ? static_cast<double>(shape.numel() / shape.dim(0)) : 1.0;
  const bool norm = name.find("norm") != std::string::npos;
  for (float& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;  // [-1, 1)
    x = static_cast<float>(shape.rank() >= 2                                            ? u * std::sqrt(3.0 / fan_in)
                           : norm && name.find("mm_soft_emb_norm") == std::string::npos ? 1.0 + 0.1 * u
                                                                                        : 0.05 * u);
  }
  return v;
}

}  // namespace ltx::gemma3::testing
