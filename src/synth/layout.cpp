#include "synth/layout.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "core/error.h"
#include "io/safetensors.h"

namespace ltx::synth {
namespace {

constexpr const char* kComponent = "synth";

// The dtypes a safetensors file can name, by their safetensors names ("BF16", "F8_E4M3").
DType dtype_from_safetensors_name(const std::string& name, const std::string& tensor) {
  constexpr std::array kPlain = {DType::F32, DType::BF16, DType::F16,     DType::I32,
                                 DType::I64, DType::U8,   DType::F8_E4M3, DType::F8_E5M2};
  for (DType d : kPlain)
    if (safetensors_dtype_name(d) == name) return d;
  fail(kComponent, "layout: tensor '" + tensor + "' has the unknown dtype '" + name + "'");
}

// Reads one [name, shape, dtype] entry.
TensorSpec read_tensor(const Json& entry) {
  LTX_CHECK(
      entry.is_array() && entry.size() == 3 && entry[0].is_string() && entry[1].is_array() && entry[2].is_string(),
      kComponent, "layout: a tensor entry is not [name, shape, dtype]: ", entry.dump());
  TensorSpec t;
  t.name = entry[0].get<std::string>();
  std::vector<int64_t> dims;
  for (const Json& d : entry[1]) {
    LTX_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, kComponent, "layout: tensor '", t.name,
              "' has a bad dimension ", d.dump());
    dims.push_back(d.get<int64_t>());
  }
  t.shape = Shape(std::span<const int64_t>(dims));
  t.dtype = dtype_from_safetensors_name(entry[2].get<std::string>(), t.name);
  return t;
}

// The layer index in `name` after `marker` ("transformer_blocks.", then digits and a dot), if any.
std::optional<int64_t> layer_index(std::string_view name, std::string_view marker) {
  size_t at = name.find(marker);
  // A marker must start the name or follow a dot, so "transformer_blocks." never matches inside a longer word.
  while (at != std::string_view::npos && at != 0 && name[at - 1] != '.') at = name.find(marker, at + 1);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = name.substr(at + marker.size());
  int64_t index = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.') return std::nullopt;
  return index;
}

// The layered stack of a layout: the DiT's blocks (the official file and its LoRA) or Gemma's text layers.
constexpr std::array<std::string_view, 2> kLayerMarkers = {"transformer_blocks.", "language_model.model.layers."};

std::optional<int64_t> any_layer_index(std::string_view name) {
  for (std::string_view marker : kLayerMarkers)
    if (auto i = layer_index(name, marker)) return i;
  return std::nullopt;
}

}  // namespace

Layout parse_layout(std::string_view json_text) {
  const Json j = parse_json(json_text, "synth layout");
  Layout l;
  try {
    LTX_CHECK(j.is_object(), kComponent, "layout: not a JSON object");
    LTX_CHECK(j.contains("name") && j["name"].is_string(), kComponent, "layout: no \"name\"");
    l.name = j["name"].get<std::string>();
    if (j.contains("files"))
      for (const Json& f : j["files"]) l.files.push_back(f.get<std::string>());
    if (j.contains("metadata")) l.metadata = j["metadata"];
    if (j.contains("config_json")) l.config_json = j["config_json"];
    LTX_CHECK(j.contains("tensors") && j["tensors"].is_array(), kComponent, "layout ", l.name, ": no \"tensors\"");
    for (const Json& e : j["tensors"]) l.tensors.push_back(read_tensor(e));
    if (j.contains("extra_tensors"))
      for (const Json& e : j["extra_tensors"]) l.tensors.push_back(read_tensor(e));
  } catch (const Json::exception& e) {
    fail(kComponent, "layout " + l.name + ": " + e.what());
  }
  LTX_CHECK(l.metadata.is_null() || l.metadata.is_object(), kComponent, "layout ", l.name,
            ": \"metadata\" is not an object");
  std::sort(l.tensors.begin(), l.tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < l.tensors.size(); ++i)
    LTX_CHECK(l.tensors[i].name != l.tensors[i - 1].name, kComponent, "layout ", l.name, ": tensor '",
              l.tensors[i].name, "' is listed twice");
  return l;
}

Layout published_layout(std::string_view name) { return parse_layout(published_layout_json(name)); }

int64_t layer_count(const Layout& layout) {
  int64_t n = 0;
  for (const TensorSpec& t : layout.tensors)
    if (auto i = any_layer_index(t.name)) n = std::max(n, *i + 1);
  return n;
}

Layout cut_layers(Layout layout, int64_t n_layers) {
  const int64_t have = layer_count(layout);
  LTX_CHECK(have > 0, kComponent, "layout ", layout.name, " has no transformer layers to cut");
  LTX_CHECK(n_layers >= 1 && n_layers <= have, kComponent, "--layers ", n_layers, " is outside [1, ", have, "] for ",
            layout.name);
  std::erase_if(layout.tensors, [&](const TensorSpec& t) {
    const auto i = any_layer_index(t.name);
    return i && *i >= n_layers;
  });
  // The readers size the model from these counts (ltx-core's LTXModelConfigurator reads transformer.num_layers;
  // transformers' Gemma3TextConfig num_hidden_layers, with one layer_types entry per layer when present).
  if (layout.metadata.is_object() && layout.metadata.contains("config")) {
    Json& config = layout.metadata["config"];
    if (config.contains("transformer") && config["transformer"].contains("num_layers"))
      config["transformer"]["num_layers"] = n_layers;
  }
  if (layout.config_json.is_object() && layout.config_json.contains("text_config")) {
    Json& text = layout.config_json["text_config"];
    if (text.contains("num_hidden_layers")) text["num_hidden_layers"] = n_layers;
    if (text.contains("layer_types") && text["layer_types"].is_array() &&
        static_cast<int64_t>(text["layer_types"].size()) > n_layers)
      text["layer_types"].erase(text["layer_types"].begin() + n_layers, text["layer_types"].end());
  }
  return layout;
}

uint64_t tensor_bytes(const TensorSpec& t) { return dtype_bytes_for(t.dtype, t.shape.numel()); }

std::map<std::string, std::string> layout_file_metadata(const Layout& layout) {
  std::map<std::string, std::string> m;
  if (!layout.metadata.is_object()) return m;
  for (const auto& [key, value] : layout.metadata.items())
    m[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return m;
}

}  // namespace ltx::synth
