// Reference kernels for ReduceSum/Mean/Max/Min: for each output element, a loop over the reduced sub-shape in
// row-major order with an f32 accumulator.
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "core/error.h"

namespace ltx::cpu::ref {

void reduce(OpKind kind, const ReduceAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const int rank = x.rank();
  Shape kept = x.shape(), reduced = x.shape();  // the two halves of x's index space
  for (int i = 0; i < rank; ++i) (a.axes[static_cast<size_t>(i)] ? kept : reduced)[i] = 1;
  const int64_t count = reduced.numel();
  LTX_CHECK(count > 0 || kind == OpKind::ReduceSum || kind == OpKind::ReduceMean, "cpu", op_name(kind),
            ": reduction over an empty axis of ", x.describe(), " has no identity");
  const size_t es = dtype_block_bytes(out.dtype());
  int64_t pos = 0;
  for_each_index(kept, [&](const int64_t* k) {
    float acc = kind == OpKind::ReduceMax   ? -std::numeric_limits<float>::infinity()
                : kind == OpKind::ReduceMin ? std::numeric_limits<float>::infinity()
                                            : 0.0f;
    for_each_index(reduced, [&](const int64_t* r) {
      int64_t idx[kMaxRank];
      for (int i = 0; i < rank; ++i) idx[i] = k[i] + r[i];  // one of the two is 0 on every axis
      const float v = load_as_f32(x.raw() + element_byte_offset(x, idx), x.dtype());
      switch (kind) {
        case OpKind::ReduceMax:
          acc = std::isnan(v) || v > acc ? v : acc;
          break;  // once NaN, stays NaN (torch)
        case OpKind::ReduceMin:
          acc = std::isnan(v) || v < acc ? v : acc;
          break;
        default:
          acc += v;
      }
    });
    if (kind == OpKind::ReduceMean) acc /= static_cast<float>(count);
    store_from_f32(out.raw() + static_cast<size_t>(pos++) * es, out.dtype(), acc);
  });
}

}  // namespace ltx::cpu::ref
