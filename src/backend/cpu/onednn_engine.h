// The one oneDNN CPU engine every oneDNN kernel (conv, matmul) runs on. Made on first use; with LTX_KERNELS=portable
// (core/cpu_features.h) oneDNN is capped at AVX2 first, so no AVX-512 code runs anywhere.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace ltx::cpu {

dnnl::engine& onednn_engine();

}  // namespace ltx::cpu
