#include "nn/attention_block.h"

#include "core/error.h"
#include "nn/precision.h"
#include "nn/rope_ltx.h"

namespace ltx::nn {

AttentionBlock AttentionBlock::load(const WeightLoader& loader, std::string_view name, int64_t query_dim,
                                    int64_t context_dim, int64_t n_heads, int64_t head_dim, bool gated, float eps,
                                    DType compute) {
  const WeightLoader s = loader.scope(name);
  const int64_t inner = n_heads * head_dim;
  AttentionBlock a;
  a.name = std::string(name);
  a.n_heads = n_heads;
  a.head_dim = head_dim;
  a.to_q = Linear::load(s, "to_q", query_dim, inner, true, compute);
  a.to_k = Linear::load(s, "to_k", context_dim, inner, true, compute);
  a.to_v = Linear::load(s, "to_v", context_dim, inner, true, compute);
  a.to_out = Linear::load(s, "to_out.0", inner, query_dim, true, compute);
  a.q_norm = RmsNorm::load(s, "q_norm", inner, eps, NormWeight::Plain);
  a.k_norm = RmsNorm::load(s, "k_norm", inner, eps, NormWeight::Plain);
  if (gated) a.to_gate_logits = Linear::load(s, "to_gate_logits", query_dim, n_heads, true, compute);
  return a;
}

Value AttentionBlock::operator()(Value x, const AttentionCall& call) const {
  // One cast each for the projections that share an input (production: bf16; validation: none).
  x = to_matmul_input(x, to_q);
  const Value ctx = call.context ? to_matmul_input(*call.context, to_k) : x;
  const int64_t b = x.dim(0), t = x.dim(1);
  const Value v = to_v(ctx);  // [B, S, inner]
  Value out = v;
  if (!call.all_perturbed) {
    Value q = q_norm(to_q(x));
    Value k = k_norm(to_k(ctx));
    if (call.pe_cos) {
      q = apply_ltx_rope(q, *call.pe_cos, *call.pe_sin, call.rope_mode, n_heads);
      k = apply_ltx_rope(k, call.k_pe_cos.value_or(*call.pe_cos), call.k_pe_sin.value_or(*call.pe_sin), call.rope_mode,
                         n_heads);
    } else {
      q = split_heads(q, n_heads);
      k = split_heads(k, n_heads);
    }
    out = merge_heads(ops::attention(q, k, split_heads(v, n_heads), call.mask));  // [B, T, inner]
    if (call.perturbation_mask) {
      // attention.py: out·m + v·(1 − m), i.e. lerp(v, out, m).
      out = ops::lerp(v, out, *call.perturbation_mask);
    }
  }
  if (to_gate_logits) {
    // attention.py: per-head gates 2·sigmoid(to_gate_logits(x)) on the query input x.
    const Value gates = ops::scale(ops::sigmoid((*to_gate_logits)(x)), 2.0f);  // [B, T, H]
    out = ops::reshape(ops::mul(ops::reshape(out, {b, t, n_heads, head_dim}), ops::reshape(gates, {b, t, n_heads, 1})),
                       {b, t, n_heads * head_dim});
  }
  return to_out(out);
}

}  // namespace ltx::nn
