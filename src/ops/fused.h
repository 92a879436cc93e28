// A fused elementwise chain: a small program over leaf tensors, evaluated in one pass over the output.
// The compiler builds one from a chain like matmul → add(bias) → gelu, or x·(1+scale)+shift; its oracle is the
// same ops run one by one through the reference kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op.h"

namespace ltx {

struct FusedInstr {
  OpKind kind = OpKind::Add;  // an elementwise op (op_is_elementwise)
  OpAttrs attrs;
  // Operand values: v < n_leaves is leaf v; otherwise the result of instruction v − n_leaves.
  int16_t args[3] = {0, 0, 0};
  int8_t n_args = 0;
};

struct FusedProgram {
  int n_leaves = 0;
  std::vector<FusedInstr> instrs;  // the last one produces the output
  // Leaves whose broadcast is per channel (axis 1 of the output), like Snake's alpha [C]: the kernel views them
  // as [1, C, 1, ...]. Bit i set for leaf i.
  uint32_t channel_leaves = 0;
};

}  // namespace ltx
