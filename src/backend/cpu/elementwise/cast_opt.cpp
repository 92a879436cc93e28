// opt::try_cast: contiguous f32 <-> bf16 on the AVX-512 row converters the fused elementwise pass uses
// (fused_elementwise.h), split across the pool. The same bits as ref::cast: bf16 -> f32 is exact, f32 -> bf16 rounds
// to nearest even with NaN kept quiet (core/half.h's f32_to_bf16, which the converters reproduce). Other pairs and
// strided tensors are left to the reference.
#include <cstdint>

#include "backend/cpu/elementwise/fused_elementwise.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {

bool try_cast(const CastAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const bool down = x.dtype() == DType::F32 && a.to == DType::BF16;
  const bool up = x.dtype() == DType::BF16 && a.to == DType::F32;
  if ((!down && !up) || out.dtype() != a.to || !x.is_contiguous() || !out.is_contiguous() || !gemm::avx512_available())
    return false;
  const auto* src = x.raw();
  auto* dst = out.raw();
  parallel_for(x.numel(), int64_t{1} << 16, [&](int64_t begin, int64_t end) {
    if (down)
      fused::store_bf16_avx512(reinterpret_cast<const float*>(src) + begin, end - begin,
                               reinterpret_cast<uint16_t*>(dst) + begin);
    else
      fused::load_bf16_avx512(reinterpret_cast<const uint16_t*>(src) + begin, end - begin,
                              reinterpret_cast<float*>(dst) + begin);
  });
  return true;
}

}  // namespace ltx::cpu::opt
