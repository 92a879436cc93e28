// Attention and RoPE (backend/cpu/attention/attention_ref.cpp, rope_ref.cpp). Attention: scores q·k in f32 times
// the scale plus the additive mask, keys after the query's index dropped when causal (top-left aligned, as torch's
// is_causal), softmax normalized after the value sum (Σ p·v / Σ p), a row with no visible key giving 0; grouped
// queries share their kv head (q head h reads kv head h / (Hq/Hkv)).
#include <cmath>

#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

HloValue attention(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& attrs = op.attrs_of<AttentionAttrs>();
  const HloValue q = op.f32(0), k = op.f32(1), v = op.f32(2);
  const int64_t batch = q.dims[0], hq = q.dims[1], tq = q.dims[2], d = q.dims[3];
  const int64_t hkv = k.dims[1], tk = k.dims[2], dv = v.dims[3], group = hq / hkv;
  const float scale = attrs.scale > 0 ? attrs.scale : 1.0f / std::sqrt(static_cast<float>(d));

  const HloValue q5 = b.reshape(q, {batch, hkv, group, tq, d});
  const int64_t batch_axes[] = {0, 1}, q_contract[] = {4}, k_contract[] = {3};
  HloValue s = b.scaled(b.dot_general(q5, k, batch_axes, batch_axes, q_contract, k_contract, "f32"), scale);
  s = b.reshape(s, {batch, hq, tq, tk});
  if (op.in.size() > 3) s = b.add(s, b.broadcast_to(op.f32(3), s.dims));
  if (attrs.causal) {
    const HloValue row = b.iota("i32", s.dims, 2), col = b.iota("i32", s.dims, 3);
    s = b.select(b.compare(col, row, Compare::GT), b.splat(-INFINITY, "f32", s.dims), s);
  }
  // Softmax with the max taken out; a row whose every key is masked keeps p = 0 and gives 0.
  const int64_t last[] = {3}, keep[] = {0, 1, 2};
  const HloValue m = b.reduce(s, last, Reduction::Max);
  const HloValue m_safe =
      b.select(b.compare(m, b.splat(-INFINITY, "f32", m.dims), Compare::EQ), b.splat(0.0, "f32", m.dims), m);
  const HloValue p = b.unary("exponential", b.sub(s, b.broadcast_in_dim(m_safe, s.dims, keep)));
  const HloValue denom = b.reduce(p, last, Reduction::Sum);

  const HloValue p5 = b.reshape(p, {batch, hkv, group, tq, tk});
  const int64_t p_contract[] = {4}, v_contract[] = {2};
  const HloValue acc =
      b.reshape(b.dot_general(p5, v, batch_axes, batch_axes, p_contract, v_contract, "f32"), {batch, hq, tq, dv});
  const HloValue denom_b = b.broadcast_in_dim(denom, acc.dims, keep);
  const HloValue o = b.div(acc, denom_b);
  const HloValue empty = b.compare(denom_b, b.splat(0.0, "f32", acc.dims), Compare::EQ);
  return op.result(b.select(empty, b.splat(0.0, "f32", acc.dims), o));
}

HloValue rope(const OpLowering& op) {
  HloBuilder& b = op.b;
  const HloValue x = op.f32(0);
  const int last = x.rank() - 1;
  const int64_t d = x.dims.back();
  if (op.attrs_of<RopeAttrs>().mode == RopeMode::SplitHalf) {
    std::vector<int64_t> half = x.dims;
    half.back() = d / 2;
    const HloValue c = b.broadcast_to(op.f32(1), half), s = b.broadcast_to(op.f32(2), half);
    const HloValue x1 = b.slice_axis(x, last, 0, d / 2), x2 = b.slice_axis(x, last, d / 2, d);
    const HloValue parts[] = {b.sub(b.mul(x1, c), b.mul(x2, s)), b.add(b.mul(x2, c), b.mul(x1, s))};
    return op.result(b.concat(parts, last));
  }
  // Interleaved: lanes (2i, 2i+1) rotate together, each with its own table entry.
  std::vector<int64_t> pairs = x.dims;
  pairs.back() = d / 2;
  pairs.push_back(2);
  const HloValue xp = b.reshape(x, pairs);
  const HloValue c = b.reshape(b.broadcast_to(op.f32(1), x.dims), pairs);
  const HloValue s = b.reshape(b.broadcast_to(op.f32(2), x.dims), pairs);
  const int lane = last + 1;
  auto even = [&](const HloValue& t) { return b.slice_axis(t, lane, 0, 1); };
  auto odd = [&](const HloValue& t) { return b.slice_axis(t, lane, 1, 2); };
  const HloValue parts[] = {b.sub(b.mul(even(xp), even(c)), b.mul(odd(xp), even(s))),
                            b.add(b.mul(odd(xp), odd(c)), b.mul(even(xp), odd(s)))};
  return op.result(b.reshape(b.concat(parts, lane), x.dims));
}

}  // namespace

HloValue lower_attention(const OpLowering& op) {
  if (op.kind == OpKind::Attention) return attention(op);
  if (op.kind == OpKind::Rope) return rope(op);
  fail("xla", "not attention: " + std::string(op_name(op.kind)));
}

}  // namespace ltx::xla
