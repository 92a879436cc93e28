// Shape/dtype inference for ReduceSum/Mean/Max/Min over a set of axes, with or without keepdim.
#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {

TensorMeta reduce(const ReduceAttrs& a, Inputs in) {
  LTX_CHECK(in.size() == 1, "op", "reduce: expects 1 input, got ", in.size());
  const TensorMeta& x = in[0];
  // Kernels accumulate in f32, which integer inputs would silently round: those go through Cast first.
  LTX_CHECK(dtype_is_float(x.dtype), "op", "reduce: x must be f32, bf16 or f16, got ", dtype_name(x.dtype),
            x.shape.str());
  bool any = false;
  Shape out;
  for (int i = 0; i < kMaxRank; ++i) {
    const bool r = a.axes[static_cast<size_t>(i)];
    LTX_CHECK(!r || i < x.shape.rank(), "op", "reduce: axis ", i, " out of range for x ", x.shape.str());
    if (i >= x.shape.rank()) continue;
    any = any || r;
    if (!r)
      out.push_back(x.shape[i]);
    else if (a.keepdim)
      out.push_back(1);
  }
  // An empty axis set is ambiguous (torch reads dim=() as "all axes"); callers must name the axes.
  LTX_CHECK(any, "op", "reduce: no axes selected for x ", x.shape.str());
  return {x.dtype, out};
}

}  // namespace ltx::infer
