// `ltx synth`: full-size stand-ins of the released LTX-2 files, with exactly their published layout (file names,
// tensor names, dtypes, shapes, `config` metadata) and deterministic values (values.h), so the engine can be tested
// at real size without downloading anything. Every file streams to disk (a few hundred MB of memory for a 46 GB
// file) under a temporary name renamed into place at the end.
//
// Models and formats:
//   ltx-2.3-22b, ltx-2-19b  bf16 (the published single file), fp8 (the official -fp8 file, fp8.h),
//                           gguf-q8_0 / gguf-q4_k / gguf-q4_k_m (the transformer as community GGUFs, gguf_formats.h)
//   upsampler-x2            bf16
//   distilled-lora          bf16
//   gemma-3-12b             hf-bf16 (the google/gemma-3-12b-it folder: config.json, <= 5 GB shards in name order
//                           with model.safetensors.index.json, or one model.safetensors when cut small, the
//                           tokenizer when given), gguf-q4_k_m
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "synth/layout.h"

namespace ltx::synth {

struct SynthOptions {
  std::string model, format, out_dir;
  uint64_t seed = 0;
  bool zeros = false;     // all-zero values, written as sparse files (seconds for 46 GB)
  int64_t layers = -1;    // keep the first N transformer layers (cut_layers); -1: all
  std::string tokenizer;  // hf-bf16: a tokenizer.json or tokenizer.model copied into the folder
};

// The formats `model` can be written in (empty for an unknown model).
std::vector<std::string> synth_formats(std::string_view model);

// Checks everything first (model, format, combination, --layers, tokenizer, the out dir being writable, free disk
// space unless zeros), throwing ltx::Error("synth", ...) naming the valid values with nothing written; then writes
// and returns the paths written. Progress lines (per file its size, then every ~5%) go to `progress`.
std::vector<std::string> write_stand_in(const SynthOptions& options, const ProgressFn& progress);

}  // namespace ltx::synth
