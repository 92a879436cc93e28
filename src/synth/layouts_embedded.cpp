// The layout files of src/synth/layouts/ linked into the library (core/embedded_file.h), so that `ltx synth` needs
// no data files beside the binary. CMakeLists.txt passes the folder as LTX_SYNTH_LAYOUT_DIR and lists the JSON
// files as this source's OBJECT_DEPENDS.
#include <array>
#include <string>

#include "core/embedded_file.h"
#include "core/error.h"
#include "synth/layout.h"

#ifndef LTX_SYNTH_LAYOUT_DIR
#error "LTX_SYNTH_LAYOUT_DIR must name the src/synth/layouts folder (CMakeLists.txt sets it)"
#endif

#define LTX_EMBED_LAYOUT(symbol, file) LTX_EMBED_FILE(symbol, LTX_SYNTH_LAYOUT_DIR "/" file)

LTX_EMBED_LAYOUT(ltx_synth_layout_ltx_2_3_22b, "ltx-2.3-22b.json")
LTX_EMBED_LAYOUT(ltx_synth_layout_ltx_2_19b, "ltx-2-19b.json")
LTX_EMBED_LAYOUT(ltx_synth_layout_gemma_3_12b, "gemma-3-12b.json")
LTX_EMBED_LAYOUT(ltx_synth_layout_upsampler_x2, "upsampler-x2.json")
LTX_EMBED_LAYOUT(ltx_synth_layout_distilled_lora, "distilled-lora.json")

namespace ltx::synth {
namespace {

struct EmbeddedLayout {
  std::string_view name;
  const char* begin;
  const char* end;
};

const std::array<EmbeddedLayout, 5>& embedded() {
  static const std::array<EmbeddedLayout, 5> layouts = {{
      {"ltx-2.3-22b", ltx_synth_layout_ltx_2_3_22b_begin, ltx_synth_layout_ltx_2_3_22b_end},
      {"ltx-2-19b", ltx_synth_layout_ltx_2_19b_begin, ltx_synth_layout_ltx_2_19b_end},
      {"gemma-3-12b", ltx_synth_layout_gemma_3_12b_begin, ltx_synth_layout_gemma_3_12b_end},
      {"upsampler-x2", ltx_synth_layout_upsampler_x2_begin, ltx_synth_layout_upsampler_x2_end},
      {"distilled-lora", ltx_synth_layout_distilled_lora_begin, ltx_synth_layout_distilled_lora_end},
  }};
  return layouts;
}

}  // namespace

std::vector<std::string> published_layout_names() {
  std::vector<std::string> names;
  for (const EmbeddedLayout& l : embedded()) names.emplace_back(l.name);
  return names;
}

std::string_view published_layout_json(std::string_view name) {
  std::string valid;
  for (const EmbeddedLayout& l : embedded()) {
    if (l.name == name) return {l.begin, static_cast<size_t>(l.end - l.begin)};
    valid += (valid.empty() ? "" : ", ") + std::string(l.name);
  }
  fail("synth", "unknown model '" + std::string(name) + "'; valid models: " + valid);
}

}  // namespace ltx::synth
