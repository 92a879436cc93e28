// Sinusoidal timestep embedding and its two-layer MLP, as ltx_core/model/transformer/timestep_embedding.py
// (get_timestep_embedding, TimestepEmbedding). The sinusoid is computed on the host in f32, in torch's operation
// order, because it is a function of a few scalars per call; the MLP runs in the graph.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nn/layers.h"

namespace ltx::nn {

struct SinusoidOptions {
  bool flip_sin_to_cos = true;        // [cos, sin] (PixArtAlphaCombinedTimestepSizeEmbeddings uses True)
  float downscale_freq_shift = 0.0f;  // frequencies exp(-ln(max_period)·i / (half - shift))
  float scale = 1.0f;
  float max_period = 10000.0f;
};

// t [N] -> [N, dim] f32: [sin(t·f_i), cos(t·f_i)] (or cos first), f_i = exp(-ln(max_period)·i/(half-shift)).
Tensor timestep_sinusoid(std::span<const float> t, int64_t dim, const SinusoidOptions& options = {});

// The distinct values of t, in order of first appearance and compared bitwise, with each element's index into them.
// A call's per-token timesteps take a few values (one sigma per pass, 0 for conditioned tokens), so a function of
// the timestep alone runs on `values` and is expanded to tokens by gathering with `ids`.
struct DistinctRows {
  std::vector<float> values;  // [U]
  std::vector<int64_t> ids;   // [N], in [0, U)
};
DistinctRows distinct_rows(std::span<const float> t);

// linear_2(SiLU(linear_1(s))): keys <name>.linear_1, <name>.linear_2 (both with bias).
struct TimestepEmbedding {
  Linear linear_1, linear_2;
  static TimestepEmbedding load(const WeightLoader& loader, std::string_view name, int64_t in_channels, int64_t dim,
                                DType compute);
  Value operator()(Value sinusoid) const;  // [N, in] -> [N, dim]
};

}  // namespace ltx::nn
