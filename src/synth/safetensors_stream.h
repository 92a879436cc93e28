// A streaming safetensors writer for files larger than memory: tensor values are computed chunk by chunk on the
// thread pool, rounded to the tensor's dtype and written while the next chunks are computed, so memory stays at a
// few hundred MB whatever the file size. Format: https://github.com/huggingface/safetensors (README "Format").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "synth/layout.h"

namespace ltx::synth {

// f32 values of elements [first, first + count) of one tensor, row-major. Called from several threads at once.
using ValuesFn = std::function<void(int64_t first, int64_t count, float* out)>;

struct StreamedTensor {
  TensorSpec spec;  // dtype F32, BF16, F16 or F8_E4M3: values round to nearest even (F8 saturates at ±448)
  ValuesFn values;  // empty: all zeros, left as a hole in a sparse file
};

// The size of the file write_safetensors_stream writes (header included).
uint64_t safetensors_stream_size(std::span<const StreamedTensor> tensors,
                                 const std::map<std::string, std::string>& metadata);

// Writes `path`: the 8-byte header length, the JSON header (dtype, shape and data_offsets of every tensor, the
// string `metadata` as __metadata__) padded with spaces to 8 bytes, then the data, largest element size first and
// by name within it (what the official writer does: every offset stays aligned). The bytes go to
// `path + ".partial"`, truncated to the full size first (so all-zero tensors cost no disk), which is synced and
// renamed to `path` at the end; on any error it is removed, so `path` is never left partial. Reports the size and
// then every ~5% to `progress` (may be empty). Returns the file size.
uint64_t write_safetensors_stream(const std::string& path, std::span<const StreamedTensor> tensors,
                                  const std::map<std::string, std::string>& metadata, const ProgressFn& progress);

// "46.14 GB" (10^9 bytes), "812.3 MB", "4.1 kB".
std::string format_bytes(uint64_t bytes);

}  // namespace ltx::synth
