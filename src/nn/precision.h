// Production precision (DESIGN.md, "Precision modes"): where weights are stored in a reduced dtype (bf16, or
// quantized), the activations a matmul reads are bf16 too, products are exact bf16·bf16 and sums f32 (vdpbf16ps),
// as ltx-core's bf16 model runs its Linears; norms, softmax, RoPE tables and the residual stream stay f32. With f32
// weights (validation) nothing changes: every value stays f32, bit for bit.
#pragma once

#include "graph/builder.h"
#include "nn/layers.h"

namespace ltx::nn {

// The dtype a matmul against `weight` reads its activations in: f32 for f32 weights, else bf16.
DType matmul_input_dtype(const Tensor& weight);

// x in the dtype `l` reads; a cast when it differs (which the compiler folds into the f32 elementwise chain that
// produced x, so the chain stores bf16 directly).
Value to_matmul_input(Value x, const Linear& l);

}  // namespace ltx::nn
