#include "nn/layers.h"

#include "core/error.h"

namespace ltx::nn {

Tensor prepare_matrix(const Tensor& stored, DType compute) {
  if (!stored.defined() || dtype_is_quantized(stored.dtype()) || stored.dtype() == compute) return stored;
  return stored.to(compute);
}

Tensor prepare_vector(const Tensor& stored) {
  if (!stored.defined() || stored.dtype() == DType::F32) return stored;
  return stored.to(DType::F32);
}

Linear Linear::load(const WeightLoader& loader, std::string_view name, int64_t in, int64_t out, bool bias,
                    DType compute) {
  const WeightLoader s = loader.scope(name);
  Linear l;
  l.name = s.prefix().substr(0, s.prefix().size() - 1);
  l.compute = compute;
  l.weight = prepare_matrix(s.get("weight", {out, in}), compute);
  if (bias) l.bias = prepare_vector(s.get("bias", {out}));
  if (const auto scale = s.get_optional("weight_scale", {})) l.weight_scale = scale->to_floats().at(0);
  (void)s.get_optional("input_scale", {});
  return l;
}

Value Linear::operator()(Value x) const {
  Graph& g = *x.graph;
  const Value w = g.constant(name + ".weight", weight);
  Value y;
  if (weight_scale != 1.0f) {
    y = ops::scale(ops::linear(x, w), weight_scale);
    if (bias.defined()) y = ops::add(y, g.constant(name + ".bias", bias));
  } else {
    y = bias.defined() ? ops::linear(x, w, g.constant(name + ".bias", bias)) : ops::linear(x, w);
  }
  for (size_t i = 0; i < low_rank.size(); ++i) {
    const LowRank& u = low_rank[i];
    const std::string n = name + ".lora_" + std::to_string(i);
    const Value h = ops::linear(x, g.constant(n + ".down", u.down));
    y = ops::add(y, ops::scale(ops::linear(h, g.constant(n + ".up", u.up)), u.scale));
  }
  return y;
}

RmsNorm RmsNorm::load(const WeightLoader& loader, std::string_view name, int64_t dim, float eps, NormWeight form) {
  const WeightLoader s = loader.scope(name);
  return RmsNorm{s.prefix().substr(0, s.prefix().size() - 1), prepare_vector(s.get("weight", {dim})), eps, form};
}

Value RmsNorm::operator()(Value x) const {
  if (form == NormWeight::None || !weight.defined()) return ops::rms_norm(x, std::nullopt, eps, NormWeight::None);
  return ops::rms_norm(x, x.graph->constant(name + ".weight", weight), eps, form);
}

LayerNorm LayerNorm::load(const WeightLoader& loader, std::string_view name, int64_t dim, float eps, bool affine,
                          bool bias) {
  LayerNorm n;
  n.eps = eps;
  if (!affine) return n;
  const WeightLoader s = loader.scope(name);
  n.name = s.prefix().substr(0, s.prefix().size() - 1);
  n.weight = prepare_vector(s.get("weight", {dim}));
  if (bias) n.bias = prepare_vector(s.get("bias", {dim}));
  return n;
}

Value LayerNorm::operator()(Value x) const {
  Graph& g = *x.graph;
  std::optional<Value> w, b;
  if (weight.defined()) w = g.constant(name + ".weight", weight);
  if (bias.defined()) b = g.constant(name + ".bias", bias);
  return ops::layer_norm(x, w, b, eps);
}

Value split_heads(Value x, int64_t n_heads) {
  LTX_CHECK(x.rank() == 3 && x.dim(2) % n_heads == 0, "nn", "split_heads: ", x.shape().str(), " into ", n_heads,
            " heads");
  const int64_t b = x.dim(0), t = x.dim(1), d = x.dim(2) / n_heads;
  return ops::permute(ops::reshape(x, {b, t, n_heads, d}), {0, 2, 1, 3});  // [B, H, T, D]
}

Value merge_heads(Value x) {
  LTX_CHECK(x.rank() == 4, "nn", "merge_heads of ", x.shape().str());
  const int64_t b = x.dim(0), h = x.dim(1), t = x.dim(2), d = x.dim(3);
  return ops::reshape(ops::permute(x, {0, 2, 1, 3}), {b, t, h * d});  // [B, T, H·D]
}

}  // namespace ltx::nn
