#include <variant>

#include "backend/cpu/kernels.h"
#include "core/error.h"

namespace ltx::cpu {
void run_reference(OpKind kind, const OpAttrs& attrs, Inputs in, const Tensor& out) {
  switch (kind) {
    case OpKind::MatMul:
      return ref::matmul(attrs_as<MatMulAttrs>(kind, attrs), in, out);
    case OpKind::Softmax:
    case OpKind::RmsNorm:
    case OpKind::LayerNorm:
    case OpKind::GroupNorm:
    case OpKind::PixelNorm:
      return ref::norm(kind, attrs, in, out);
    case OpKind::Attention:
      return ref::attention(attrs_as<AttentionAttrs>(kind, attrs), in, out);
    case OpKind::Rope:
      return ref::rope(attrs_as<RopeAttrs>(kind, attrs), in, out);
    case OpKind::Conv:
    case OpKind::ConvTranspose1d:
      return ref::conv(kind, attrs_as<ConvAttrs>(kind, attrs), in, out);
    case OpKind::DepthToSpace:
    case OpKind::SpaceToDepth:
    case OpKind::UpsampleNearest:
      return ref::resample(kind, attrs_as<ResampleAttrs>(kind, attrs), in, out);
    case OpKind::AntiAliasSnakeBeta:
      return ref::anti_alias_snake_beta(attrs_as<SnakeAttrs>(kind, attrs), in, out);
    case OpKind::Gather:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::Permute:
    case OpKind::Reshape:
    case OpKind::Pad:
      return ref::layout(kind, attrs, in, out);
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
      return ref::reduce(kind, attrs_as<ReduceAttrs>(kind, attrs), in, out);
    case OpKind::Cast:
      return ref::cast(attrs_as<CastAttrs>(kind, attrs), in, out);
    default:
      return ref::elementwise(kind, attrs, in, out);
  }
}

}  // namespace ltx::cpu
