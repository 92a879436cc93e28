// StableHLO lowerings of the op set (ops/op.h), one family per file. Each takes the operands as HloValues of their
// graph dtypes and returns the result in the node's dtype. They follow the reference kernels' arithmetic
// (backend/cpu, every op computed in f32 and rounded once at the store): operands are widened to f32, the op runs
// in f32 (reductions and dot products accumulate in f32), and the result is rounded to its dtype once.
#pragma once

#include <span>

#include "backend/xla/hlo_builder.h"
#include "ops/op.h"

namespace ltx::xla {

struct OpLowering {
  HloBuilder& b;
  OpKind kind;
  const OpAttrs& attrs;
  std::span<const HloValue> in;
  std::span<const TensorMeta> in_metas;  // the operands' graph types (a GGUF weight's HloValue is its bytes)
  const TensorMeta& out;

  // Operand i widened to f32 (a GGUF weight dequantized) and, for f32_broadcast, broadcast to the output's shape.
  HloValue f32(size_t i) const;
  HloValue f32_broadcast(size_t i) const;
  // The f32 result rounded to the output dtype.
  HloValue result(const HloValue& value) const { return b.convert(value, elem_of(out.dtype)); }
  std::vector<int64_t> out_dims() const { return {out.shape.begin(), out.shape.end()}; }
  template <typename T>
  const T& attrs_of() const {
    return attrs_as<T>(kind, attrs);
  }
};

HloValue lower_elementwise(const OpLowering& op);  // Add .. SnakeBeta, Cast
HloValue lower_matmul(const OpLowering& op);
HloValue lower_norm(const OpLowering& op);       // Softmax, RmsNorm, LayerNorm, GroupNorm, PixelNorm
HloValue lower_attention(const OpLowering& op);  // Attention, Rope
HloValue lower_conv(const OpLowering& op);       // Conv, ConvTranspose1d, AntiAliasSnakeBeta
HloValue lower_resample(const OpLowering& op);   // DepthToSpace, SpaceToDepth, UpsampleNearest
HloValue lower_layout(const OpLowering& op);     // Gather, Concat, Slice, Permute, Reshape, Pad
HloValue lower_reduce(const OpLowering& op);     // ReduceSum, ReduceMean, ReduceMax, ReduceMin

// SnakeBeta's x + (1/(beta + 1e-9)) · sin(x·alpha)² (elementwise_ref.cpp), all f32 of x's shape.
HloValue snake(HloBuilder& b, const HloValue& x, const HloValue& alpha, const HloValue& beta);

// GGUF weight rows: `bytes` [..., row bytes] (u8) of block type `type` -> f32 [..., k], as core/quant.cpp decodes
// them (each product rounded to f32, in its order).
HloValue dequantize_rows(HloBuilder& b, const HloValue& bytes, DType type, int64_t k);
// Whether a weight of this type reaches the program as its raw bytes (the GGUF block types).
inline bool passed_as_bytes(DType t) { return dtype_is_quantized(t) && t != DType::F8_E4M3 && t != DType::F8_E5M2; }

// x padded along `axis` by edge replication or reflection (torch's modes; PadMode::Zeros/Constant use b.pad).
HloValue pad_edges(HloBuilder& b, const HloValue& x, int axis, int64_t before, int64_t after, PadMode mode);
// The per-op dispatch: the node's op lowered onto b.
HloValue lower_op(HloBuilder& b, OpKind kind, const OpAttrs& attrs, std::span<const HloValue> in,
                  std::span<const TensorMeta> in_metas, const TensorMeta& out);

}  // namespace ltx::xla
