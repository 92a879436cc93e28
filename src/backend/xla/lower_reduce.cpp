// ReduceSum, ReduceMean, ReduceMax, ReduceMin (backend/cpu/reduce/reduce_ref.cpp): f32 accumulation, the mean as a
// division by the count, NaN sticking in max and min (XLA's maximum and minimum propagate it), one rounding.
#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

HloValue lower_reduce(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& a = op.attrs_of<ReduceAttrs>();
  const HloValue x = op.f32(0);
  std::vector<int64_t> axes;
  int64_t count = 1;
  for (int i = 0; i < x.rank(); ++i)
    if (a.axes[static_cast<size_t>(i)]) {
      axes.push_back(i);
      count *= x.dims[static_cast<size_t>(i)];
    }
  const Reduction kind = op.kind == OpKind::ReduceMax   ? Reduction::Max
                         : op.kind == OpKind::ReduceMin ? Reduction::Min
                                                        : Reduction::Sum;
  HloValue r = b.reduce(x, axes, kind);
  if (op.kind == OpKind::ReduceMean) r = b.div(r, b.splat(static_cast<double>(count), "f32", r.dims));
  return op.result(b.reshape(r, op.out_dims()));  // keepdim: the reduced dimensions come back as 1
}

}  // namespace ltx::xla
