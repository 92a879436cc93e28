// A fused elementwise chain: a small program over leaf tensors, evaluated in one pass over the output.
// The compiler builds one from a chain like matmul → add(bias) → gelu, or x·(1+scale)+shift; its oracle is the
// same ops run one by one through the reference kernels.
//
// Matmul epilogue: the first instruction may be a MatMul (attrs MatMulAttrs, args two leaves a and b) whose result
// has the output's shape. The matmul kernels then compute it and hand their f32 sums, never rounded to the matmul's
// own dtype, to the rest of the program, which stores each output element once. In f32 the bits equal the matmul
// step followed by the fused step; with bf16 activations one rounding replaces two (as torch's addmm rounds after
// the bias). Leaves only the matmul reads (its a and b) are not loaded elementwise.
//
// Row normalization: the first instruction may instead be RmsNorm or LayerNorm over the last axis without weight or
// bias (attrs NormAttrs, arg one leaf x of the output's shape). Each row is normalized in f32 and handed, unrounded,
// to the rest of the program (row_norm.h); in f32 the bits equal the norm step followed by the fused step.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/op.h"

namespace ltx {

// Ops that may lead a program (its first instruction only): their kernels produce the values and hand them on.
inline bool leads_fused_program(OpKind kind) {
  return kind == OpKind::MatMul || kind == OpKind::RmsNorm || kind == OpKind::LayerNorm;
}

struct FusedInstr {
  OpKind kind = OpKind::Add;  // an elementwise op (op_is_elementwise), or a leading op as the first instruction
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
