// opt::try_attention: picks our AVX-512 flash attention when the CPU runs it (kept out of the *_avx512.cpp file
// so that this check itself never executes AVX-512 code).
#include "backend/cpu/attention/attention_opt.h"

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"

namespace ltx::cpu::opt {

bool try_attention(const AttentionAttrs& attrs, Inputs in, const Tensor& out) {
  if (!gemm::avx512_available()) return false;
  return attention_avx512(attrs, in, out);
}

}  // namespace ltx::cpu::opt
