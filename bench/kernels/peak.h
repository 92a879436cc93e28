// Peak multiply-add throughput of this machine over all pool threads, in GFLOP/s (2 flops per multiply-add),
// measured with independent FMA (F32) or vdpbf16ps (BF16) chains: the ceiling a GEMM is judged against.
#pragma once

#include "backend/cpu/matmul/matmul_gemm.h"

namespace ltx::bench {

double measure_peak_gflops(cpu::gemm::Compute c);

}  // namespace ltx::bench
