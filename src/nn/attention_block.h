// Multi-head attention as LTX uses it (ltx_core/model/transformer/attention.py:Attention): q/k/v/out Linears with
// bias, RMSNorm over the whole inner width of q and k (learnable weight), rotary tables applied after the norm,
// an optional additive mask, an optional per-head gate 2·sigmoid(to_gate_logits(x)), and the STG value
// pass-through (self-attention replaced by the value projection, per batch item).
#pragma once

#include <optional>

#include "nn/layers.h"

namespace ltx::nn {

struct AttentionCall {
  std::optional<Value> context;  // [B, S, context_dim]; self-attention when absent
  // Rotary tables for q (pe) and k (k_pe, defaults to pe); see rope_ltx.h for the layouts.
  std::optional<Value> pe_cos, pe_sin, k_pe_cos, k_pe_sin;
  RopeMode rope_mode = RopeMode::SplitHalf;
  std::optional<Value> mask;  // additive, broadcastable to [B, H, T, S]
  // STG: every sample passes the value projection through (q and k are never computed) ...
  bool all_perturbed = false;
  // ... or a per-sample blend out·m + v·(1 − m) with m [B, 1, 1] in {0, 1}.
  std::optional<Value> perturbation_mask;
};

struct AttentionBlock {
  std::string name;
  int64_t n_heads = 0, head_dim = 0;
  Linear to_q, to_k, to_v, to_out;
  RmsNorm q_norm, k_norm;
  std::optional<Linear> to_gate_logits;

  static AttentionBlock load(const WeightLoader& loader, std::string_view name, int64_t query_dim, int64_t context_dim,
                             int64_t n_heads, int64_t head_dim, bool gated, float eps, DType compute);
  // x [B, T, query_dim] -> [B, T, query_dim]
  Value operator()(Value x, const AttentionCall& call = {}) const;
};

}  // namespace ltx::nn
