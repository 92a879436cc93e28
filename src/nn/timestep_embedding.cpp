#include "nn/timestep_embedding.h"

#include <bit>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace ltx::nn {

Tensor timestep_sinusoid(std::span<const float> t, int64_t dim, const SinusoidOptions& o) {
  LTX_CHECK(dim >= 2, "nn", "timestep_sinusoid: dim ", dim);
  const int64_t half = dim / 2;
  // ltx_core timestep_embedding.py:get_timestep_embedding: exponent = -ln(max_period)·arange(half) in f32,
  // divided by (half - shift), exp'd, multiplied by t, scaled; all in f32.
  std::vector<float> freq(static_cast<size_t>(half));
  const float neg_log_period = -static_cast<float>(std::log(static_cast<double>(o.max_period)));
  const float denom = static_cast<float>(half) - o.downscale_freq_shift;
  for (int64_t i = 0; i < half; ++i)
    freq[static_cast<size_t>(i)] = std::exp(neg_log_period * static_cast<float>(i) / denom);
  const auto n = static_cast<int64_t>(t.size());
  std::vector<float> out(static_cast<size_t>(n * dim), 0.0f);
  for (int64_t r = 0; r < n; ++r) {
    float* row = out.data() + r * dim;
    for (int64_t i = 0; i < half; ++i) {
      const float arg = o.scale * (t[static_cast<size_t>(r)] * freq[static_cast<size_t>(i)]);
      const float s = std::sin(arg), c = std::cos(arg);
      row[o.flip_sin_to_cos ? half + i : i] = s;
      row[o.flip_sin_to_cos ? i : half + i] = c;
    }
  }
  return Tensor::from_floats(DType::F32, Shape{n, dim}, out);
}

DistinctRows distinct_rows(std::span<const float> t) {
  DistinctRows d;
  d.ids.reserve(t.size());
  std::unordered_map<uint32_t, int64_t> index;  // bit pattern -> row: 0.0f and -0.0f stay apart, as their sinusoids
  for (const float x : t) {
    const auto [it, added] = index.try_emplace(std::bit_cast<uint32_t>(x), static_cast<int64_t>(d.values.size()));
    if (added) d.values.push_back(x);
    d.ids.push_back(it->second);
  }
  return d;
}

TimestepEmbedding TimestepEmbedding::load(const WeightLoader& loader, std::string_view name, int64_t in_channels,
                                          int64_t dim, DType compute) {
  const WeightLoader s = loader.scope(name);
  return {Linear::load(s, "linear_1", in_channels, dim, true, compute),
          Linear::load(s, "linear_2", dim, dim, true, compute)};
}

Value TimestepEmbedding::operator()(Value sinusoid) const { return linear_2(ops::silu(linear_1(sinusoid))); }

}  // namespace ltx::nn
