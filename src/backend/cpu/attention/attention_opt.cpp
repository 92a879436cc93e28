// opt::try_attention: picks our AVX-512 attention when the CPU runs it, the decode kernel for a few f32 queries, else
// the flash kernel (kept out of the *_avx512.cpp files so that this check itself never executes AVX-512 code).
#include "backend/cpu/attention/attention_opt.h"

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"

namespace ltx::cpu::opt {

bool try_attention(const AttentionAttrs& attrs, Inputs in, const Tensor& out) {
  if (!gemm::avx512_available()) return false;
  if (!in.empty() && in[0].rank() == 4 && in[0].dim(2) <= kDecodeMaxQueries && attention_decode_avx512(attrs, in, out))
    return true;
  return attention_avx512(attrs, in, out);
}

}  // namespace ltx::cpu::opt
