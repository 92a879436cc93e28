// Shape and dtype inference, one function per op family (src/ops/infer_<family>.cpp).
#pragma once

#include "ops/op.h"

namespace ltx::infer {

using Inputs = std::span<const TensorMeta>;

TensorMeta matmul(const MatMulAttrs& a, Inputs in);
TensorMeta elementwise(OpKind kind, const OpAttrs& a, Inputs in);  // Add..SnakeBeta
TensorMeta norm(OpKind kind, const OpAttrs& a, Inputs in);         // Softmax, RmsNorm, LayerNorm, GroupNorm, PixelNorm
TensorMeta attention(const AttentionAttrs& a, Inputs in);
TensorMeta rope(const RopeAttrs& a, Inputs in);
TensorMeta conv(OpKind kind, const ConvAttrs& a, Inputs in);          // Conv, ConvTranspose1d
TensorMeta resample(OpKind kind, const ResampleAttrs& a, Inputs in);  // DepthToSpace, SpaceToDepth, Upsample
TensorMeta anti_alias_snake_beta(const SnakeAttrs& a, Inputs in);     // in infer_resample.cpp
TensorMeta layout(OpKind kind, const OpAttrs& a, Inputs in);          // Gather, Concat, Slice, Permute, Reshape, Pad
TensorMeta reduce(const ReduceAttrs& a, Inputs in);
TensorMeta cast(const CastAttrs& a, Inputs in);

}  // namespace ltx::infer
