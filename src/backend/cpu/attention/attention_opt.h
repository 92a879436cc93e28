// Our flash-style attention (attention_opt_avx512.cpp) and the few-query kernel generation steps take
// (attention_decode_avx512.cpp); opt::try_attention (attention_opt.cpp) calls them only on a CPU with
// AVX-512F/BW/VL/DQ and BF16.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// The whole Attention call (kernel contract of kernels.h); false for dtype mixes it does not handle.
bool attention_avx512(const AttentionAttrs& attrs, Inputs in, const Tensor& out);

// At most this many queries per head take the decode kernel (attention_decode_avx512.cpp): a generation step's.
inline constexpr int64_t kDecodeMaxQueries = 4;
// f32 attention of at most kDecodeMaxQueries queries (rows of each head's D and Dv contiguous); false otherwise.
bool attention_decode_avx512(const AttentionAttrs& attrs, Inputs in, const Tensor& out);

}  // namespace ltx::cpu::opt
