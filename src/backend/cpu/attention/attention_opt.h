// Our flash-style attention (attention_opt_avx512.cpp); opt::try_attention (attention_opt.cpp) calls it only on a
// CPU with AVX-512F/BW/VL/DQ and BF16.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// The whole Attention call (kernel contract of kernels.h); false for dtype mixes it does not handle.
bool attention_avx512(const AttentionAttrs& attrs, Inputs in, const Tensor& out);

}  // namespace ltx::cpu::opt
