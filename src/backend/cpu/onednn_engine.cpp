#include "backend/cpu/onednn_engine.h"

#include "core/cpu_features.h"

namespace ltx::cpu {

dnnl::engine& onednn_engine() {
  static dnnl::engine e = [] {
    // Effective only before oneDNN's first primitive; this engine is made before any.
    if (cpu_features().portable) dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return e;
}

}  // namespace ltx::cpu
