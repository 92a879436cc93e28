#include "nn/feed_forward.h"

namespace ltx::nn {

FeedForward FeedForward::load(const WeightLoader& loader, std::string_view name, int64_t dim, int64_t dim_out,
                              int64_t mult, DType compute) {
  const WeightLoader s = loader.scope(name).scope("net");
  return {Linear::load(s, "0.proj", dim, dim * mult, true, compute),
          Linear::load(s, "2", dim * mult, dim_out, true, compute)};
}

Value FeedForward::operator()(Value x) const { return proj_out(ops::gelu_tanh(proj_in(x))); }

}  // namespace ltx::nn
