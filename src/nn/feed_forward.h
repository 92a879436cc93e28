// Feed-forward Linear(dim, mult·dim) -> GELU(tanh) -> Linear(mult·dim, dim_out), both with bias; keys
// <name>.net.0.proj, <name>.net.2 (ltx_core/model/transformer/feed_forward.py, gelu_approx.py).
#pragma once

#include "nn/layers.h"

namespace ltx::nn {

struct FeedForward {
  Linear proj_in, proj_out;
  static FeedForward load(const WeightLoader& loader, std::string_view name, int64_t dim, int64_t dim_out, int64_t mult,
                          DType compute);
  Value operator()(Value x) const;  // [..., dim] -> [..., dim_out]
};

}  // namespace ltx::nn
