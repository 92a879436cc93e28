// A Permute whose every reader is Attention's q or v is a strided view in the plan, not a copy step.
#include "graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

int count_steps(const Plan& plan, const std::string& op) {
  const std::string text = plan.describe();
  int n = 0;
  for (size_t at = text.find("  " + op + " "); at != std::string::npos; at = text.find("  " + op + " ", at + 1)) ++n;
  return n;
}

// [B, T, H·D] -> [B, H, T, D] as nn::split_heads does it.
Value split(Value x, int64_t heads) {
  return permute(reshape(x, {x.dim(0), x.dim(1), heads, x.dim(2) / heads}), {0, 2, 1, 3});
}

// Attention with RoPE on k only, heads split from one projection each: the q and v splits become views, k's split
// (read by Rope) and the merge back (read by a Reshape) stay copies; the result equals the reference ops on
// contiguous copies.
TEST(PermuteView, HeadSplitsReadAsQueryOrValueAreViews) {
  const int64_t b = 1, t = 19, heads = 2, d = 8;
  const Tensor x = random_tensor(DType::F32, {b, t, heads * d}, 1);
  const Tensor wq = random_tensor(DType::F32, {heads * d, heads * d}, 2),
               wk = random_tensor(DType::F32, {heads * d, heads * d}, 3),
               wv = random_tensor(DType::F32, {heads * d, heads * d}, 4);
  const Tensor cos = random_tensor(DType::F32, {b, heads, t, d / 2}, 5),
               sin = random_tensor(DType::F32, {b, heads, t, d / 2}, 6);
  Graph g;
  const Value vx = g.input("x", DType::F32, {b, t, heads * d});
  const Value vc = g.constant("cos", cos), vs = g.constant("sin", sin);
  const Value q = split(matmul(vx, g.constant("wq", wq), false, true), heads);
  const Value k = rope(split(matmul(vx, g.constant("wk", wk), false, true), heads), vc, vs, RopeMode::SplitHalf);
  const Value v = split(matmul(vx, g.constant("wv", wv), false, true), heads);
  const Value o = attention(q, k, v);
  g.output(reshape(permute(o, {0, 2, 1, 3}), {b, t, heads * d}), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  EXPECT_EQ(count_steps(*plan, "permute"), 2) << plan->describe();  // k's split and the merge
  const Tensor got = plan->run({x})[0];

  const auto split_ref = [&](const Tensor& y) {
    return y.reshape({b, t, heads, d}).permute({0, 2, 1, 3}).contiguous();
  };
  const MatMulAttrs nt{false, true};
  const Tensor rq = split_ref(ref(OpKind::MatMul, nt, {x, wq}));
  const Tensor rk =
      ref(OpKind::Rope, RopeAttrs{RopeMode::SplitHalf}, {split_ref(ref(OpKind::MatMul, nt, {x, wk})), cos, sin});
  const Tensor rv = split_ref(ref(OpKind::MatMul, nt, {x, wv}));
  const Tensor ro = ref(OpKind::Attention, AttentionAttrs{}, {rq, rk, rv});
  const Tensor expect = ro.permute({0, 2, 1, 3}).contiguous().reshape({b, t, heads * d});
  EXPECT_LE(max_abs_diff(got, expect), 1e-5f);
}

// A permute read by anything else (here an elementwise op) is still a copy.
TEST(PermuteView, OtherReadersKeepTheCopy) {
  Graph g;
  const Value x = g.input("x", DType::F32, {3, 4, 5});
  const Value p = permute(silu(x), {1, 0, 2});
  g.output(add(p, p), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  EXPECT_EQ(count_steps(*plan, "permute"), 1) << plan->describe();
}

}  // namespace
}  // namespace ltx::test
