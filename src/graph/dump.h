// Writes named intermediates to a safetensors file (LTX_DUMP), for comparison with the reference's dumps.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace ltx {

// Copies the tensors (they may be arena views) and writes them to `path`, replacing the file atomically.
void dump_tensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace ltx
