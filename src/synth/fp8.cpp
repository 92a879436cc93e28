#include "synth/fp8.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "core/half.h"

namespace ltx::synth {
namespace {

constexpr std::string_view kDitPrefix = "model.diffusion_model.";
constexpr std::string_view kWeightSuffix = ".weight";
constexpr std::string_view kWeightScaleSuffix = ".weight_scale";
constexpr std::string_view kInputScaleSuffix = ".input_scale";

// ltx_core/quantization/fp8_scaled_mm.py, EXCLUDED_LAYER_SUBSTRINGS (matched against LTXModel module paths).
constexpr std::array<std::string_view, 18> kExcludedLayerSubstrings = {
    "patchify_proj",
    "adaln_single",
    "av_ca_video_scale_shift_adaln_single",
    "av_ca_a2v_gate_adaln_single",
    "caption_projection",
    "proj_out",
    "audio_patchify_proj",
    "audio_adaln_single",
    "av_ca_audio_scale_shift_adaln_single",
    "av_ca_v2a_gate_adaln_single",
    "audio_caption_projection",
    "audio_proj_out",
    "transformer_blocks.0.",
    "transformer_blocks.43.",
    "transformer_blocks.44.",
    "transformer_blocks.45.",
    "transformer_blocks.46.",
    "transformer_blocks.47.",
};

// The layer's module path in LTXModel ("transformer_blocks.5.attn1.to_q"), or empty when `t` is no DiT block weight.
std::string_view block_linear_path(const TensorSpec& t) {
  std::string_view n = t.name;
  if (!n.starts_with(kDitPrefix) || t.shape.rank() != 2 || !n.ends_with(kWeightSuffix)) return {};
  n.remove_prefix(kDitPrefix.size());
  n.remove_suffix(kWeightSuffix.size());
  return n.starts_with("transformer_blocks.") ? n : std::string_view{};
}

TensorSpec scalar_f32(std::string name) { return {std::move(name), Shape{}, DType::F32}; }

ValuesFn constant(float v) {
  return [v](int64_t, int64_t count, float* out) { std::fill_n(out, count, v); };
}

// 448 / max|w|, the reference's `scale` (its weight_scale is the reciprocal).
float quantization_scale(const TensorSpec& weight) {
  return kF8E4M3Max / value_rule({weight.name, weight.shape, DType::BF16}).max_abs();
}

}  // namespace

bool is_fp8_linear_weight(const TensorSpec& t) {
  const std::string_view path = block_linear_path(t);
  if (path.empty()) return false;
  // Rank-2 `.weight`s inside a block are all nn.Linear (norms are 1-D; the tables are not `.weight`).
  return std::none_of(kExcludedLayerSubstrings.begin(), kExcludedLayerSubstrings.end(),
                      [&](std::string_view s) { return path.find(s) != std::string_view::npos; });
}

Layout fp8_layout(Layout bf16) {
  std::vector<TensorSpec> added;
  for (TensorSpec& t : bf16.tensors) {
    if (!is_fp8_linear_weight(t)) continue;
    t.dtype = DType::F8_E4M3;
    const std::string layer = t.name.substr(0, t.name.size() - kWeightSuffix.size());
    added.push_back(scalar_f32(layer + std::string(kWeightScaleSuffix)));
    added.push_back(scalar_f32(layer + std::string(kInputScaleSuffix)));
  }
  bf16.tensors.insert(bf16.tensors.end(), added.begin(), added.end());
  std::sort(bf16.tensors.begin(), bf16.tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return bf16;
}

std::vector<StreamedTensor> stand_in_tensors(const Layout& layout, const ValueGenerator& values) {
  // The F8 weights by layer, to recognise their scales.
  std::unordered_map<std::string, const TensorSpec*> f8_layers;
  for (const TensorSpec& t : layout.tensors)
    if (t.dtype == DType::F8_E4M3) f8_layers[t.name.substr(0, t.name.size() - kWeightSuffix.size())] = &t;
  const auto f8_layer_of = [&](const std::string& name, std::string_view suffix) -> const TensorSpec* {
    if (!std::string_view(name).ends_with(suffix)) return nullptr;
    const auto it = f8_layers.find(name.substr(0, name.size() - suffix.size()));
    return it == f8_layers.end() ? nullptr : it->second;
  };

  std::vector<StreamedTensor> out;
  out.reserve(layout.tensors.size());
  for (const TensorSpec& t : layout.tensors) {
    StreamedTensor s{t, {}};
    if (const TensorSpec* w = f8_layer_of(t.name, kWeightScaleSuffix)) {
      s.values = constant(values.zeros() ? 1.0f : 1.0f / quantization_scale(*w));
    } else if (f8_layer_of(t.name, kInputScaleSuffix)) {
      s.values = constant(1.0f);
    } else if (values.zeros()) {
      // left empty: all zeros
    } else if (t.dtype == DType::F8_E4M3) {
      // The bf16 file's weight (same name, same values), rounded to bf16 as the published weights were, then
      // scaled into the e4m3 range; the writer's cast saturates like the reference's clamp.
      const TensorSpec master{t.name, t.shape, DType::BF16};
      const float scale = quantization_scale(t);
      s.values = [&values, master, scale](int64_t first, int64_t count, float* dst) {
        values.fill(master, first, count, dst);
        for (int64_t i = 0; i < count; ++i) dst[i] = bf16_to_f32(f32_to_bf16(dst[i])) * scale;
      };
    } else {
      s.values = [&values, t](int64_t first, int64_t count, float* dst) { values.fill(t, first, count, dst); };
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ltx::synth
