#include "nn/feed_forward.h"

#include "nn/precision.h"

namespace ltx::nn {

FeedForward FeedForward::load(const WeightLoader& loader, std::string_view name, int64_t dim, int64_t dim_out,
                              int64_t mult, DType compute) {
  const WeightLoader s = loader.scope(name).scope("net");
  return {Linear::load(s, "0.proj", dim, dim * mult, true, compute),
          Linear::load(s, "2", dim * mult, dim_out, true, compute)};
}

// Production: x and the GELU's output in bf16 (the GELU itself in f32, rounded once as it is stored).
Value FeedForward::operator()(Value x) const {
  return proj_out(to_matmul_input(ops::gelu_tanh(proj_in(to_matmul_input(x, proj_in))), proj_out));
}

}  // namespace ltx::nn
