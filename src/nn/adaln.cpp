#include "nn/adaln.h"

#include "core/error.h"

namespace ltx::nn {

AdaLayerNormSingle AdaLayerNormSingle::load(const WeightLoader& loader, std::string_view name, int64_t dim,
                                            int64_t coef, DType compute) {
  const WeightLoader s = loader.scope(name);
  AdaLayerNormSingle a;
  a.name = std::string(name);
  a.dim = dim;
  a.coef = coef;
  a.emb = TimestepEmbedding::load(s.scope("emb"), "timestep_embedder", kTimestepSinusoidDim, dim, compute);
  a.linear = Linear::load(s, "linear", dim, coef * dim, true, compute);
  return a;
}

AdaLayerNormSingle::Out AdaLayerNormSingle::operator()(Value sinusoid) const {
  const Value e = emb(sinusoid);
  return {linear(ops::silu(e)), e};
}

AdaLayerNormSingle::Out AdaLayerNormSingle::operator()(Value sinusoid, Value ids) const {
  const Out rows = (*this)(sinusoid);  // [U, coef·dim], [U, dim]
  return {ops::gather(rows.modulation, ids), ops::gather(rows.embedded_timestep, ids)};
}

std::vector<Value> ada_values(const Tensor& table, const std::string& table_name, Value modulation, int64_t first,
                              int64_t count) {
  // modulation: [B, T', coef, dim]; table: [coef_table, dim] with the rows addressed relative to the modulation.
  LTX_CHECK(modulation.rank() == 4 && table.rank() == 2 && table.dim(1) == modulation.dim(3), "nn",
            "ada_values: table ", table.shape().str(), " vs modulation ", modulation.shape().str());
  Graph& g = *modulation.graph;
  const int64_t b = modulation.dim(0), t = modulation.dim(1), d = modulation.dim(3);
  std::vector<Value> out;
  for (int64_t i = first; i < first + count; ++i) {
    const Value row = g.constant(table_name + "[" + std::to_string(i) + "]", table.slice(0, i, i + 1).reshape({d}));
    const Value m = ops::reshape(ops::slice(modulation, 2, i, i + 1), {b, t, d});
    out.push_back(ops::add(m, row));
  }
  return out;
}

}  // namespace ltx::nn
