// Dense 1-D convolution with bf16 weights on our own GEMM (conv1d_avx512.cpp): the vocoders' convs in production
// precision. The dispatcher tries it before try_conv.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// Conv with spatial 1, groups 1, bf16 weights [O, C, K], f32 or bf16 input [B, C, L] (rounded to bf16 as oneDNN's
// f32×bf16 path does), optional bias, f32 or bf16 output; every pad mode but Constant, any stride and dilation.
// False (nothing written) when the call is not that or the CPU lacks AVX-512 BF16.
struct Conv1dTuning {
  // Stride-1 convs with at most this many input channels take the direct kernel (vdpbf16ps on channel pairs, a
  // 6-channel × 64-position register tile), wider ones the GEMM over bf16 columns. Measured on the vocoder (2
  // threads, LTX_PROFILE=shapes): direct 2.5-5x faster at 16-128 channels, faster at 192-384, even at 768.
  int64_t direct_max_channels = 512;
  int64_t max_col_bytes = int64_t{32} << 20;  // the GEMM path's column buffer; output positions chunked past it
};
bool try_conv1d_bf16(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out, const Conv1dTuning& tuning = {});

}  // namespace ltx::cpu::opt
