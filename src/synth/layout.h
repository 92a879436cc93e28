// The published layouts of the released LTX-2 files: every tensor's name, shape and dtype and the `config`
// metadata, as tools/reference/make_layouts.py derived them from the reference code (src/synth/layouts/README.md
// describes the format and what is assumed). They are linked into the library, so `ltx synth` can write full-size
// stand-ins of those files anywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "io/json.h"

namespace ltx::synth {

// Receives one human-readable progress line at a time (file sizes, percentages).
using ProgressFn = std::function<void(const std::string& line)>;

struct TensorSpec {
  std::string name;
  Shape shape;
  DType dtype = DType::BF16;
};

struct Layout {
  std::string name;                 // "ltx-2.3-22b"
  std::vector<std::string> files;   // published file names as the layout lists them, the first is the canonical one
  Json metadata;                    // safetensors __metadata__, `config` as a dict (null when the files have none)
  Json config_json;                 // Gemma's HF config.json (null otherwise)
  std::vector<TensorSpec> tensors;  // the published tensors, extra_tensors included, sorted by name
};

// Parses a layout file's JSON; throws ltx::Error("synth", ...) on a malformed one or a name given twice.
Layout parse_layout(std::string_view json_text);

// The embedded layouts: names in a fixed order, their JSON text, and parsed.
std::vector<std::string> published_layout_names();
std::string_view published_layout_json(std::string_view name);  // throws listing the valid names
Layout published_layout(std::string_view name);                 // throws listing the valid names

// The first n_layers transformer layers only: keeps `transformer_blocks.<i>.` (the DiT, and its LoRA) or Gemma's
// `language_model.model.layers.<i>.` for i < n_layers, drops the rest, and rewrites the config's layer count
// (`config.transformer.num_layers`, `text_config.num_hidden_layers`) so the smaller file is self-consistent.
// Throws when the layout has no such layers or n_layers is outside [1, layers].
Layout cut_layers(Layout layout, int64_t n_layers);

// The transformer layers a layout has (0 when it has none).
int64_t layer_count(const Layout& layout);

// Bytes of the tensor's data.
uint64_t tensor_bytes(const TensorSpec& t);

// The layout's safetensors __metadata__: strings as they are, `config` (a dict in the layout) as the JSON string the
// configurators parse.
std::map<std::string, std::string> layout_file_metadata(const Layout& layout);

}  // namespace ltx::synth
