// What this CPU offers, read once: the one place the kernels' instruction-set checks come from. LTX_KERNELS=portable
// (the other value: native, the default) reports no AVX-512 or AMX, so the engine runs its portable kernels and
// caps oneDNN at AVX2: what a CPU without AVX-512 computes (the determinism tests compare both).
#pragma once

namespace ltx {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;          // FMA3: torch's AVX2/AVX-512 kernels round with it (core/torch_cpu_math.h)
  bool avx512 = false;       // AVX-512 F, BW, VL and DQ: the 16-lane f32 kernels
  bool avx512_bf16 = false;  // avx512 and AVX512_BF16: vdpbf16ps natively (else emulated, at about half the speed)
  bool avx512_vnni = false;  // avx512 and AVX512_VNNI (vpdpbusd)
  bool amx_bf16 = false;
  bool portable = false;  // LTX_KERNELS=portable: the flags above are off whatever the CPU has (but avx2, fma)
};

const CpuFeatures& cpu_features();

}  // namespace ltx
