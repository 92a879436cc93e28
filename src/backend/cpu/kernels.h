// The CPU backend's table: a plain reference kernel for every op, and the dispatcher that picks the fastest
// kernel available for a call (an optimized one where it exists and the CPU supports it, else the reference).
//
// Contract for every kernel: `out` is preallocated with exactly the dtype and shape infer_output gives, and is
// contiguous; inputs may have any strides (broadcast stride-0 views included) and any dtype the op accepts.
// All arithmetic and every reduction is in f32; bf16/f16 outputs are rounded once at the store.
#pragma once

#include <memory>
#include <span>

#include "backend/backend.h"
#include "core/tensor.h"
#include "ops/fused.h"
#include "ops/op.h"

namespace ltx::cpu {

using Inputs = std::span<const Tensor>;

// Where a matmul's results go when the compiler fused the elementwise chain that consumes it into the matmul step
// (ops/fused.h): the kernels hand each output element's f32 sum, never rounded, to store(), which applies the chain
// and writes the output once. Implemented over a FusedProgram by fused_elementwise.h (FusedEpilogue).
class MatMulEpilogue {
 public:
  virtual ~MatMulEpilogue() = default;
  // Output elements (row, col + j) for j < count from values[j]; row counts the output's rows with every batch dim
  // folded in (flat element index row·N + col). Called concurrently for disjoint elements.
  virtual void store(int64_t row, int64_t col, int64_t count, const float* values) const = 0;
};

// The scratch (kernel_scratch.h) the MatMul kernel takes for this call, from shapes and dtypes alone with a and b
// contiguous (a call with other strides that needs more uses the kernel's thread-local buffers instead); with_epilogue:
// a fused step's matmul whose results go to an epilogue (out then has the epilogue's dtype). 0 where it needs none.
size_t matmul_scratch_bytes(const MatMulAttrs& attrs, std::span<const TensorMeta> in, const TensorMeta& out,
                            bool with_epilogue);

void run_reference(OpKind kind, const OpAttrs& attrs, Inputs inputs, const Tensor& out);
// `prepared` (may be null): the step's slot for prepared weights (PreparedWeights, backend/backend.h).
void run(OpKind kind, const OpAttrs& attrs, Inputs inputs, const Tensor& out, PreparedSlot* prepared = nullptr);
// Evaluates a fused elementwise program over its leaves (broadcast to out's shape) in one pass (fused_elementwise.cpp).
// A program led by a MatMul (ops/fused.h) runs as that matmul with the rest of the program as its epilogue.
void run_fused(const FusedProgram& program, Inputs leaves, const Tensor& out);

// Reference kernels, one family per file (src/backend/cpu/<family>_ref.cpp).
namespace ref {
void matmul(const MatMulAttrs& a, Inputs in, const Tensor& out);
// With an epilogue: out only gives the output's shape (its dtype is the epilogue's); every result goes to store().
void matmul(const MatMulAttrs& a, Inputs in, const Tensor& out, const MatMulEpilogue* epilogue);
void elementwise(OpKind kind, const OpAttrs& a, Inputs in, const Tensor& out);
void norm(OpKind kind, const OpAttrs& a, Inputs in, const Tensor& out);
void attention(const AttentionAttrs& a, Inputs in, const Tensor& out);
void rope(const RopeAttrs& a, Inputs in, const Tensor& out);
void conv(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out);
void resample(OpKind kind, const ResampleAttrs& a, Inputs in, const Tensor& out);
void anti_alias_snake_beta(const SnakeAttrs& a, Inputs in, const Tensor& out);  // resample_ref.cpp
void layout(OpKind kind, const OpAttrs& a, Inputs in, const Tensor& out);
void reduce(OpKind kind, const ReduceAttrs& a, Inputs in, const Tensor& out);
void cast(const CastAttrs& a, Inputs in, const Tensor& out);
}  // namespace ref

}  // namespace ltx::cpu
