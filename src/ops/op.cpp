#include "ops/op.h"

#include <array>

#include "core/error.h"
#include "ops/infer.h"

namespace ltx {
namespace {

constexpr std::array<std::string_view, kOpKindCount> kNames = {"matmul",
                                                               "add",
                                                               "sub",
                                                               "mul",
                                                               "div",
                                                               "lerp",
                                                               "scale",
                                                               "clamp",
                                                               "silu",
                                                               "gelu",
                                                               "gelu_tanh",
                                                               "sigmoid",
                                                               "tanh",
                                                               "leaky_relu",
                                                               "snake",
                                                               "snake_beta",
                                                               "softmax",
                                                               "rms_norm",
                                                               "layer_norm",
                                                               "group_norm",
                                                               "pixel_norm",
                                                               "attention",
                                                               "rope",
                                                               "conv",
                                                               "conv_transpose1d",
                                                               "depth_to_space",
                                                               "space_to_depth",
                                                               "upsample_nearest",
                                                               "anti_alias_snake_beta",
                                                               "gather",
                                                               "concat",
                                                               "slice",
                                                               "permute",
                                                               "reshape",
                                                               "pad",
                                                               "reduce_sum",
                                                               "reduce_mean",
                                                               "reduce_max",
                                                               "reduce_min",
                                                               "cast"};

}  // namespace

void throw_wrong_attrs(OpKind kind) { fail("op", std::string(op_name(kind)) + ": wrong attribute type"); }

std::string_view op_name(OpKind kind) { return kNames[static_cast<size_t>(kind)]; }

bool op_is_elementwise(OpKind kind) { return kind >= OpKind::Add && kind <= OpKind::SnakeBeta; }

bool op_is_view(OpKind kind) { return kind == OpKind::Slice || kind == OpKind::Permute || kind == OpKind::Reshape; }

TensorMeta infer_output(OpKind kind, const OpAttrs& attrs, std::span<const TensorMeta> inputs) {
  switch (kind) {
    case OpKind::MatMul:
      return infer::matmul(attrs_as<MatMulAttrs>(kind, attrs), inputs);
    case OpKind::Softmax:
    case OpKind::RmsNorm:
    case OpKind::LayerNorm:
    case OpKind::GroupNorm:
    case OpKind::PixelNorm:
      return infer::norm(kind, attrs, inputs);
    case OpKind::Attention:
      return infer::attention(attrs_as<AttentionAttrs>(kind, attrs), inputs);
    case OpKind::Rope:
      return infer::rope(attrs_as<RopeAttrs>(kind, attrs), inputs);
    case OpKind::Conv:
    case OpKind::ConvTranspose1d:
      return infer::conv(kind, attrs_as<ConvAttrs>(kind, attrs), inputs);
    case OpKind::DepthToSpace:
    case OpKind::SpaceToDepth:
    case OpKind::UpsampleNearest:
      return infer::resample(kind, attrs_as<ResampleAttrs>(kind, attrs), inputs);
    case OpKind::AntiAliasSnakeBeta:
      return infer::anti_alias_snake_beta(attrs_as<SnakeAttrs>(kind, attrs), inputs);
    case OpKind::Gather:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::Permute:
    case OpKind::Reshape:
    case OpKind::Pad:
      return infer::layout(kind, attrs, inputs);
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
      return infer::reduce(attrs_as<ReduceAttrs>(kind, attrs), inputs);
    case OpKind::Cast:
      return infer::cast(attrs_as<CastAttrs>(kind, attrs), inputs);
    default:
      return infer::elementwise(kind, attrs, inputs);
  }
}

}  // namespace ltx
