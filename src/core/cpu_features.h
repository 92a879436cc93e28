// What this CPU offers, read once: the one place the kernels' instruction-set checks come from.
#pragma once

namespace ltx {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;          // FMA3: torch's AVX2/AVX-512 kernels round with it (core/torch_cpu_math.h)
  bool avx512 = false;       // AVX-512 F, BW, VL and DQ: the 16-lane f32 kernels
  bool avx512_bf16 = false;  // avx512 and AVX512_BF16 (vdpbf16ps): the bf16 GEMM and most optimized kernels
  bool avx512_vnni = false;  // avx512 and AVX512_VNNI (vpdpbusd)
  bool amx_bf16 = false;
};

const CpuFeatures& cpu_features();

}  // namespace ltx
