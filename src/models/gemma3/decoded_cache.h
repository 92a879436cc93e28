// The decoded layer matrices of a GGUF Gemma (dequantize_layer_matrices) kept in a file, so that a later process
// maps them instead of decoding them again (270M, bf16: 200 MB, decoded in ~0.2 CPU s and written through
// 50k fresh pages; mapped from the page cache in a few ms).
//
// File (little-endian): a 4 KiB header — magic "LTXGDEC\0", format version, dtype, the source's identity (byte size,
// modification time in ns, a hash of its first MiB), the number of matrices, each one's rows and columns, the data
// size, a hash of the data and a hash of the header itself — then the matrices back to back, each at a 64-byte
// aligned offset, in quantized_layer_matrices' order. The file is used only when every field matches what this
// load expects and both hashes hold; otherwise (another or a changed GGUF, another dtype or format, a truncated or
// damaged file) it is decoded again and the file rewritten, all-or-nothing (io::AtomicFile), without waiting for
// the disk (Unsynced: a file a crash left incomplete fails its hashes and is rewritten).
#pragma once

#include <cstdint>
#include <string>

#include "models/gemma3/weights.h"

namespace ltx::gemma3 {

enum class DecodedCacheOutcome : uint8_t {
  NotUsed,    // nothing to decode (no quantized matrices, or over the budget)
  Read,       // mapped from the file
  Written,    // no file yet: decoded and written
  Rewritten,  // a file was there but did not match this source, or failed its hashes: decoded and rewritten
};

// dequantize_layer_matrices through the cache file `cache_path` for the GGUF at `source_path` (see above). A
// cache that cannot be written (read-only folder, full disk) is not an error: the matrices stay decoded in memory.
DecodedCacheOutcome dequantize_layer_matrices_cached(Weights& weights, DType to, int64_t budget_bytes,
                                                     const std::string& source_path, const std::string& cache_path);

// The cache file name for a source inside `cache_dir`: one per GGUF path and dtype.
std::string decoded_cache_path(const std::string& cache_dir, const std::string& source_path, DType to);

}  // namespace ltx::gemma3
