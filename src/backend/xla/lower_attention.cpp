// Attention and RoPE (backend/cpu/attention/attention_ref.cpp, rope_ref.cpp). Attention: scores q·k in f32 times
// the scale plus the additive mask, keys after the query's index dropped when causal (top-left aligned, as torch's
// is_causal), softmax normalized after the value sum (Σ p·v / Σ p), a row with no visible key giving 0; grouped
// queries share their kv head (q head h reads kv head h / (Hq/Hkv)). Up to kKeyBlock · 2 keys the scores are one
// tensor; beyond, a loop over blocks of kKeyBlock keys with an online softmax (the running max, sum and value
// accumulator rescaled as the max grows, as the reference does in blocks of 64) keeps the working memory at
// O(queries x kKeyBlock) per head.
#include <cmath>

#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

constexpr int64_t kKeyBlock = 512;

// The additive mask as rank 4 (broadcastable to [B, Hq, Tq, Tk]).
HloValue mask4(HloBuilder& b, const HloValue& mask) {
  std::vector<int64_t> dims = mask.dims;
  while (dims.size() < 4) dims.insert(dims.begin(), 1);
  return b.reshape(mask, dims);
}

// Σ p·v / Σ p over key blocks; q5 [B, Hkv, G, Tq, D], k [B, Hkv, Tk, D], v [B, Hkv, Tk, Dv], all f32.
HloValue blocked_attention(const OpLowering& op, const HloValue& q5, const HloValue& k, const HloValue& v,
                           float scale) {
  HloBuilder& b = op.b;
  const bool causal = op.attrs_of<AttentionAttrs>().causal;
  const int64_t batch = q5.dims[0], hkv = q5.dims[1], group = q5.dims[2], tq = q5.dims[3], d = q5.dims[4];
  const int64_t tk = k.dims[2], dv = v.dims[3], hq = hkv * group;
  const int64_t blocks = (tk + kKeyBlock - 1) / kKeyBlock, padded = blocks * kKeyBlock;
  const int64_t no_pad[] = {0, 0, 0, 0}, key_pad[] = {0, 0, padded - tk, 0};
  const HloValue zero = b.splat(0.0, "f32", {});
  const HloValue kp = b.pad(k, zero, no_pad, key_pad, no_pad), vp = b.pad(v, zero, no_pad, key_pad, no_pad);
  std::vector<HloValue> state = {b.splat(0.0, "i32", {}),
                                 b.splat(-INFINITY, "f32", {batch, hq, tq}),
                                 b.splat(0.0, "f32", {batch, hq, tq}),
                                 b.splat(0.0, "f32", {batch, hq, tq, dv}),
                                 q5,
                                 kp,
                                 vp};
  const bool has_mask = op.in.size() > 3;
  bool mask_has_keys = false;
  if (has_mask) {
    HloValue m = mask4(b, op.f32(3));
    mask_has_keys = m.dims[3] != 1;
    if (mask_has_keys) {
      const int64_t mask_pad[] = {0, 0, 0, padded - tk};
      m = b.pad(m, zero, no_pad, mask_pad, no_pad);
    }
    state.push_back(m);
  }
  const auto condition = [&](HloBuilder& r, const std::vector<HloValue>& s) {
    return std::vector<HloValue>{r.compare(s[0], r.splat(static_cast<double>(blocks), "i32", {}), Compare::LT)};
  };
  const auto body = [&](HloBuilder& r, const std::vector<HloValue>& s) {
    const HloValue start = r.mul(s[0], r.splat(static_cast<double>(kKeyBlock), "i32", {}));
    const HloValue z = r.splat(0.0, "i32", {});
    const HloValue kb = r.dynamic_slice(s[5], {z, z, start, z}, {batch, hkv, kKeyBlock, d});
    const HloValue vb = r.dynamic_slice(s[6], {z, z, start, z}, {batch, hkv, kKeyBlock, dv});
    const int64_t batch_axes[] = {0, 1}, q_contract[] = {4}, k_contract[] = {3};
    HloValue sc = r.scaled(r.dot_general(s[4], kb, batch_axes, batch_axes, q_contract, k_contract, "f32"), scale);
    sc = r.reshape(sc, {batch, hq, tq, kKeyBlock});
    if (has_mask) {
      HloValue m = s[7];
      if (mask_has_keys) m = r.dynamic_slice(m, {z, z, z, start}, {m.dims[0], m.dims[1], m.dims[2], kKeyBlock});
      sc = r.add(sc, r.broadcast_to(m, sc.dims));
    }
    // Keys past the end (padding) and, when causal, after the query's index are not visible.
    const HloValue key = r.add(r.iota("i32", sc.dims, 3), r.broadcast_in_dim(start, sc.dims, {}));
    HloValue hidden = r.compare(key, r.splat(static_cast<double>(tk), "i32", sc.dims), Compare::GE);
    if (causal) hidden = r.binary("or", hidden, r.compare(key, r.iota("i32", sc.dims, 2), Compare::GT));
    sc = r.select(hidden, r.splat(-INFINITY, "f32", sc.dims), sc);

    const int64_t last[] = {3}, keep[] = {0, 1, 2};
    const HloValue m_new = r.max(s[1], r.reduce(sc, last, Reduction::Max));
    const HloValue m_safe = r.select(r.compare(m_new, r.splat(-INFINITY, "f32", m_new.dims), Compare::EQ),
                                     r.splat(0.0, "f32", m_new.dims), m_new);
    const HloValue correction = r.unary("exponential", r.sub(s[1], m_safe));
    const HloValue p = r.unary("exponential", r.sub(sc, r.broadcast_in_dim(m_safe, sc.dims, keep)));
    const HloValue l = r.add(r.mul(s[2], correction), r.reduce(p, last, Reduction::Sum));
    const HloValue p5 = r.reshape(p, {batch, hkv, group, tq, kKeyBlock});
    const int64_t p_contract[] = {4}, v_contract[] = {2};
    const HloValue pv =
        r.reshape(r.dot_general(p5, vb, batch_axes, batch_axes, p_contract, v_contract, "f32"), {batch, hq, tq, dv});
    const HloValue acc = r.add(r.mul(s[3], r.broadcast_in_dim(correction, pv.dims, keep)), pv);
    std::vector<HloValue> next = s;
    next[0] = r.add(s[0], r.splat(1.0, "i32", {}));
    next[1] = m_new;
    next[2] = l;
    next[3] = acc;
    return next;
  };
  const std::vector<HloValue> final_state = b.while_loop(state, condition, body);
  const int64_t keep[] = {0, 1, 2};
  const HloValue denom = b.broadcast_in_dim(final_state[2], final_state[3].dims, keep);
  const HloValue empty = b.compare(denom, b.splat(0.0, "f32", denom.dims), Compare::EQ);
  return op.result(b.select(empty, b.splat(0.0, "f32", denom.dims), b.div(final_state[3], denom)));
}

HloValue attention(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& attrs = op.attrs_of<AttentionAttrs>();
  const HloValue q = op.f32(0), k = op.f32(1), v = op.f32(2);
  const int64_t batch = q.dims[0], hq = q.dims[1], tq = q.dims[2], d = q.dims[3];
  const int64_t hkv = k.dims[1], tk = k.dims[2], dv = v.dims[3], group = hq / hkv;
  const float scale = attrs.scale > 0 ? attrs.scale : 1.0f / std::sqrt(static_cast<float>(d));

  const HloValue q5 = b.reshape(q, {batch, hkv, group, tq, d});
  if (tk > 2 * kKeyBlock) return blocked_attention(op, q5, k, v, scale);
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
