// Optimized CPU kernels. Each returns false when it does not handle the call (dtype, layout, CPU features), and
// the dispatcher then runs the reference kernel; each is tested against that reference.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// matmul*.cpp; with an epilogue (kernels.h) the results go through it and out's dtype is the epilogue's.
bool try_matmul(const MatMulAttrs& a, Inputs in, const Tensor& out, const MatMulEpilogue* epilogue = nullptr);
bool try_attention(const AttentionAttrs& a, Inputs in, const Tensor& out);  // attention_opt*.cpp
bool try_rope(const RopeAttrs& a, Inputs in, const Tensor& out);            // rope_opt_avx512.cpp
// conv_opt*.cpp; `prepared` (may be null) keeps the weights in oneDNN's layout between runs of a plan step.
bool try_conv(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared = nullptr);
bool try_norm(OpKind kind, const NormAttrs& a, Inputs in, const Tensor& out);  // norm_opt_avx512.cpp: Rms/LayerNorm
bool try_pixel_norm(const NormAttrs& a, Inputs in, const Tensor& out);  // pixel_norm_opt.cpp: over a non-last axis
bool try_cast(const CastAttrs& a, Inputs in, const Tensor& out);        // cast_opt.cpp: contiguous f32 <-> bf16
// Slice, Permute, Gather (layout_opt.cpp)
bool try_layout(OpKind kind, const OpAttrs& attrs, Inputs in, const Tensor& out);

}  // namespace ltx::cpu::opt
