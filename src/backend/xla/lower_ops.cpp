// The per-op dispatch onto the family lowerings.
#include "backend/xla/lower_ops.h"

namespace ltx::xla {

HloValue OpLowering::f32(size_t i) const {
  const TensorMeta& m = in_metas[i];
  if (passed_as_bytes(m.dtype)) return dequantize_rows(b, in[i], m.dtype, m.shape.dim(-1));
  return b.convert(in[i], "f32");
}

HloValue OpLowering::f32_broadcast(size_t i) const { return b.broadcast_to(f32(i), out_dims()); }

HloValue lower_op(HloBuilder& b, OpKind kind, const OpAttrs& attrs, std::span<const HloValue> in,
                  std::span<const TensorMeta> in_metas, const TensorMeta& out) {
  const OpLowering op{b, kind, attrs, in, in_metas, out};
  switch (kind) {
    case OpKind::MatMul:
      return lower_matmul(op);
    case OpKind::Softmax:
    case OpKind::RmsNorm:
    case OpKind::LayerNorm:
    case OpKind::GroupNorm:
    case OpKind::PixelNorm:
      return lower_norm(op);
    case OpKind::Attention:
    case OpKind::Rope:
      return lower_attention(op);
    case OpKind::Conv:
    case OpKind::ConvTranspose1d:
    case OpKind::AntiAliasSnakeBeta:
      return lower_conv(op);
    case OpKind::DepthToSpace:
    case OpKind::SpaceToDepth:
    case OpKind::UpsampleNearest:
      return lower_resample(op);
    case OpKind::Gather:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::Permute:
    case OpKind::Reshape:
    case OpKind::Pad:
      return lower_layout(op);
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
      return lower_reduce(op);
    default:
      return lower_elementwise(op);  // Add .. SnakeBeta, Cast
  }
}

}  // namespace ltx::xla
