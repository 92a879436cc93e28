// Where a padded coordinate reads from, shared by every kernel that pads (pad, conv reference and optimized).
#pragma once

#include <cstdint>

#include "ops/op.h"

namespace ltx::cpu {

// The index into an unpadded dimension of size n for padded coordinate i (already shifted by the leading pad),
// or -1 where the padding is a constant. Reflect mirrors without repeating the edge (torch's "reflect"), valid
// because shape inference keeps pads below n.
inline int64_t pad_source_index(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::Replicate:
      return i < 0 ? 0 : n - 1;
    case PadMode::Reflect:
      return i < 0 ? -i : 2 * (n - 1) - i;
    default:
      return -1;
  }
}

}  // namespace ltx::cpu
