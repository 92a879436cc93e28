// AdaLN-single (PixArt-alpha), ltx_core/model/transformer/adaln.py:AdaLayerNormSingle: a timestep embedding
// emb = TimestepEmbedding(sinusoid_256(t)) and modulation = Linear(SiLU(emb)) with coef·dim outputs. Keys:
// <name>.emb.timestep_embedder.linear_{1,2}, <name>.linear.
#pragma once

#include "nn/timestep_embedding.h"

namespace ltx::nn {

inline constexpr int64_t kTimestepSinusoidDim = 256;

struct AdaLayerNormSingle {
  std::string name;
  int64_t dim = 0;
  int64_t coef = 0;
  TimestepEmbedding emb;
  Linear linear;

  static AdaLayerNormSingle load(const WeightLoader& loader, std::string_view name, int64_t dim, int64_t coef,
                                 DType compute);
  struct Out {
    Value modulation;         // [N, coef·dim]
    Value embedded_timestep;  // [N, dim]
  };
  // sinusoid: [N, 256] from timestep_sinusoid(t·timestep_scale_multiplier).
  Out operator()(Value sinusoid) const;
  // Per-token timesteps: the MLP runs once per distinct value and its rows are gathered to tokens. sinusoid
  // [U, 256] of distinct_rows(t).values, ids [N] its ids -> outputs [N, ...]. A row's MLP is the same computation
  // whether it runs among U rows or N, so this equals operator() on the full sinusoid.
  Out operator()(Value sinusoid, Value ids) const;
};

// Per-row modulation parameters: table[rows] (+ broadcast) mod[..., rows, :] for a modulation viewed as
// [B, T', coef, dim] (T' = 1 for a per-sample timestep). Returns one [B, T', dim] value per row in `rows`.
// ltx_core transformer.py:BasicAVTransformerBlock.get_ada_values.
std::vector<Value> ada_values(const Tensor& table, const std::string& table_name, Value modulation, int64_t first,
                              int64_t count);

}  // namespace ltx::nn
