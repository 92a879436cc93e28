// Dense 1-D convolution with bf16 weights on our own GEMM (conv1d_avx512.cpp): the vocoders' convs in production
// precision. The dispatcher tries it before try_conv.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// Conv with spatial 1, groups 1, bf16 weights [O, C, K], f32 or bf16 input [B, C, L] (rounded to bf16 as oneDNN's
// f32×bf16 path does), optional bias, f32 or bf16 output; every pad mode but Constant, any stride and dilation.
// False (nothing written) when the call is not that or the CPU lacks AVX-512 BF16.
// `max_col_bytes` bounds the bf16 column buffer (output positions are then computed in chunks).
bool try_conv1d_bf16(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out,
                     int64_t max_col_bytes = int64_t{32} << 20);

}  // namespace ltx::cpu::opt
