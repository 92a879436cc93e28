#include "pipeline/finite_check.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace ltx {

int64_t non_finite_count(const Tensor& t) {
  int64_t n = 0;
  if (t.dtype() == DType::F32 && t.is_contiguous()) {  // the latents: read in place
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) n += std::isfinite(p[i]) ? 0 : 1;
    return n;
  }
  for (float v : t.to_floats()) n += std::isfinite(v) ? 0 : 1;
  return n;
}

void check_finite(const Tensor& t, std::string_view component, std::string_view what, std::string_view where) {
  const int64_t bad = non_finite_count(t);
  LTX_CHECK(bad == 0, std::string(component), what, " hold ", bad, " non-finite values (NaN or Inf) of ", t.numel(),
            " ", where, "; the run stops here and writes nothing (guidance scales far too large, or corrupt weights)");
}

}  // namespace ltx
