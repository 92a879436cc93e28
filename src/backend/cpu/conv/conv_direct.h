// The convolution paths without a vendor primitive (conv_direct.cpp), behind opt::try_conv: the depthwise 1-D
// kernel (the vocoder's anti-aliased resampling filters) and im2col over our GEMM, where oneDNN offers no primitive.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// groups = channels, one filter per channel, 1-D.
bool is_depthwise_1d(OpKind kind, const ConvAttrs& a, Inputs in);
void conv_depthwise_1d(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out);

// Precondition: AVX-512 with BF16 (our GEMM); x and w of one dtype.
void conv_im2col(const ConvAttrs& a, Inputs in, const Tensor& out);

}  // namespace ltx::cpu::opt
