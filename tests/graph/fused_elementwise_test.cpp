// The fused kernel against its unfused composition through the reference kernels.
#include "backend/cpu/elementwise/fused_elementwise.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "graph_test_util.h"
#include "ops/fused_instr.h"

namespace ltx::test {
namespace {

Tensor run_fused(const FusedProgram& p, std::vector<Tensor> leaves, DType dtype, const Shape& shape) {
  Tensor out = Tensor::empty(dtype, shape);
  cpu::run_fused(p, leaves, out);
  return out;
}

// (a + b) · sigmoid(c) with b broadcast over rows and c a non-contiguous view; 300 columns cross a block edge.
TEST(FusedElementwise, BroadcastAndStridedLeavesMatchTheComposition) {
  const Shape shape{3, 300};
  const Tensor a = random_tensor(DType::F32, shape, 1), b = random_tensor(DType::F32, {300}, 2);
  const Tensor c = random_tensor(DType::F32, {300, 3}, 3).transpose(0, 1);
  FusedProgram p;
  p.n_leaves = 3;
  p.instrs = {instr(OpKind::Add, {0, 1}), instr(OpKind::Sigmoid, {2}), instr(OpKind::Mul, {3, 4})};
  const Tensor got = run_fused(p, {a, b, c}, DType::F32, shape);
  const Tensor expect =
      ref(OpKind::Mul, NoAttrs{}, {ref(OpKind::Add, NoAttrs{}, {a, b}), ref(OpKind::Sigmoid, NoAttrs{}, {c})});
  EXPECT_LE(max_abs_diff(got, expect), 1e-6f);
}

// Every elementwise op, one at a time, in f32 and bf16.
TEST(FusedElementwise, EachOpMatchesItsReferenceKernel) {
  const Shape shape{2, 5, 33};
  const Tensor x = random_tensor(DType::F32, shape, 4, -3.0f, 3.0f),
               y = random_tensor(DType::F32, shape, 5, 0.5f, 2.0f);
  const Tensor t = random_tensor(DType::F32, shape, 6), alpha = random_tensor(DType::F32, {5}, 7, 0.2f, 1.5f);
  const Tensor beta = random_tensor(DType::F32, {5}, 8, 0.2f, 1.5f);
  struct Case {
    OpKind kind;
    OpAttrs attrs;
    std::vector<Tensor> in;
    uint32_t channel_leaves;
  };
  const std::vector<Case> cases = {
      {OpKind::Add, NoAttrs{}, {x, y}, 0},
      {OpKind::Sub, NoAttrs{}, {x, y}, 0},
      {OpKind::Mul, NoAttrs{}, {x, y}, 0},
      {OpKind::Div, NoAttrs{}, {x, y}, 0},
      {OpKind::Lerp, NoAttrs{}, {x, y, t}, 0},
      {OpKind::Scale, ScaleAttrs{-1.5f, 0.25f}, {x}, 0},
      {OpKind::Clamp, ClampAttrs{-1.0f, 0.5f}, {x}, 0},
      {OpKind::Silu, NoAttrs{}, {x}, 0},
      {OpKind::Gelu, NoAttrs{}, {x}, 0},
      {OpKind::GeluTanh, NoAttrs{}, {x}, 0},
      {OpKind::Sigmoid, NoAttrs{}, {x}, 0},
      {OpKind::Tanh, NoAttrs{}, {x}, 0},
      {OpKind::LeakyRelu, LeakyReluAttrs{0.1f}, {x}, 0},
      {OpKind::Snake, SnakeAttrs{false}, {x, alpha}, 2},
      {OpKind::Snake, SnakeAttrs{true}, {x, alpha}, 2},
      {OpKind::SnakeBeta, SnakeAttrs{true}, {x, alpha, beta}, 6},
  };
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (const Case& c : cases) {
      std::vector<Tensor> in;
      for (size_t i = 0; i < c.in.size(); ++i) in.push_back((c.channel_leaves >> i) & 1u ? c.in[i] : c.in[i].to(dtype));
      FusedProgram p;
      p.n_leaves = static_cast<int>(in.size());
      p.channel_leaves = c.channel_leaves;
      FusedInstr ins;
      ins.kind = c.kind;
      ins.attrs = c.attrs;
      ins.n_args = static_cast<int8_t>(in.size());
      for (int i = 0; i < p.n_leaves; ++i) ins.args[i] = static_cast<int16_t>(i);
      p.instrs = {ins};
      const Tensor got = run_fused(p, in, dtype, shape);
      const Tensor expect = ref(c.kind, c.attrs, in);
      // f32: same formula, libm differences only. bf16: both round the f32 result once; allow one bf16 ulp.
      const float tol = dtype == DType::F32 ? 2e-6f : 1.6e-2f;
      EXPECT_LE(max_abs_diff(got, expect), tol) << op_name(c.kind) << " " << dtype_name(dtype);
    }
  }
}

// f32 output (validation mode): every op, vector path or not, gives the reference kernel's bits, over lengths that
// leave vector tails (1, 15, 17, 300) and a bf16 leaf.
TEST(FusedElementwise, F32ResultsAreBitIdenticalToTheReference) {
  for (const int64_t n : {1, 15, 17, 300}) {
    const Shape shape{3, n};
    const Tensor x = random_tensor(DType::F32, shape, 11, -9.0f, 9.0f), y = random_tensor(DType::F32, shape, 12);
    const Tensor t = random_tensor(DType::F32, shape, 13).to(DType::BF16);
    const std::vector<std::pair<OpKind, OpAttrs>> ops = {{OpKind::Add, NoAttrs{}},
                                                         {OpKind::Sub, NoAttrs{}},
                                                         {OpKind::Mul, NoAttrs{}},
                                                         {OpKind::Div, NoAttrs{}},
                                                         {OpKind::Lerp, NoAttrs{}},
                                                         {OpKind::Scale, ScaleAttrs{-1.5f, 0.25f}},
                                                         {OpKind::Clamp, ClampAttrs{-1.0f, 0.5f}},
                                                         {OpKind::Silu, NoAttrs{}},
                                                         {OpKind::GeluTanh, NoAttrs{}},
                                                         {OpKind::Sigmoid, NoAttrs{}},
                                                         {OpKind::LeakyRelu, LeakyReluAttrs{0.1f}}};
    for (const auto& [kind, attrs] : ops) {
      const int arity = kind == OpKind::Lerp ? 3 : (kind <= OpKind::Div ? 2 : 1);
      std::vector<Tensor> in{x, y, t};
      in.resize(static_cast<size_t>(arity));
      FusedProgram p;
      p.n_leaves = arity;
      FusedInstr ins;
      ins.kind = kind;
      ins.attrs = attrs;
      ins.n_args = static_cast<int8_t>(arity);
      for (int i = 0; i < arity; ++i) ins.args[i] = static_cast<int16_t>(i);
      p.instrs = {ins};
      const Tensor got = run_fused(p, in, DType::F32, shape);
      const Tensor expect = ref(kind, attrs, in);
      EXPECT_EQ(std::memcmp(got.raw(), expect.raw(), got.nbytes()), 0) << op_name(kind) << " n=" << n;
    }
  }
}

// The polynomial forms used for bf16/f16 results, against double-precision libm over wide ranges: inputs spread
// log-uniformly over [1e-6, 100] with both signs, plus edge values. Measured on Zen 4: max 2.9 ulps (silu),
// 2.0 (sigmoid), 6.1 (gelu_tanh above -2; below, 9.5e-6 relative); bounds 4, 4, 8 ulps of the f32 result (of
// FLT_MIN below it) and 2e-5; exact 0/inf/NaN. A bf16 ulp is 2^16 f32 ulps.
TEST(FusedElementwise, VectorTranscendentalsStayWithinFourUlpsOfLibm) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::vector<float> x = {0.0f, -0.0f, 1e-30f, -1e-30f, 88.0f, -88.0f, 1e4f, -1e4f, INFINITY, -INFINITY};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> lg(std::log(1e-6), std::log(100.0));
  for (int i = 0; i < 200000; ++i) x.push_back(static_cast<float>((i % 2 ? -1 : 1) * std::exp(lg(rng))));
  const auto n = static_cast<int64_t>(x.size());
  struct Fn {
    OpKind kind;
    double (*exact)(double);
    double max_ulps;
  };
  const Fn fns[] = {
      {OpKind::Silu, [](double v) { return v / (1.0 + std::exp(-v)); }, 4.0},
      {OpKind::Sigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, 4.0},
      {OpKind::GeluTanh,
       // 0.5·v·(1 + tanh(u)) written as v / (1 + e^(-2u)), which does not cancel to 0 for large negative v.
       [](double v) { return v / (1.0 + std::exp(-2.0 * 0.7978845608028654 * (v + 0.044715 * v * v * v))); }, 8.0},
  };
  for (const Fn& f : fns) {
    FusedInstr ins;
    ins.kind = f.kind;
    ins.n_args = 1;
    std::vector<float> r(x.size());
    ASSERT_TRUE(cpu::fused::eval_avx512(ins, x.data(), x.data(), x.data(), r.data(), n, true));
    double worst = 0.0, worst_rel_far = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = f.exact(x[static_cast<size_t>(i)]);
      const float ef = static_cast<float>(e);
      if (std::isnan(e)) {
        EXPECT_TRUE(std::isnan(r[static_cast<size_t>(i)])) << op_name(f.kind) << " at " << x[static_cast<size_t>(i)];
        continue;
      }
      if (std::isinf(ef) || ef == 0.0f) {
        EXPECT_EQ(r[static_cast<size_t>(i)], ef) << op_name(f.kind) << " at " << x[static_cast<size_t>(i)];
        continue;
      }
      // ulps of the f32 result; below the smallest normal, ulps of the smallest normal (2^-149 steps there
      // are far below a bf16 ulp, the precision these results are stored in).
      const double a = std::max<double>(std::fabs(ef), FLT_MIN);
      const double ulp = std::nextafter(static_cast<float>(a), INFINITY) - a;
      const double err = std::fabs(r[static_cast<size_t>(i)] - e);
      // gelu_tanh below -2: the f32 rounding of its argument 2u alone moves e^(2u) by ~2^-24·|2u|, so there a
      // relative bound applies, on normal results (the f32 reference kernel is far worse there: 1 + tanh(u)
      // cancels, and is 0 below about -4.6).
      if (f.kind == OpKind::GeluTanh && x[static_cast<size_t>(i)] < -2.0f)
        worst_rel_far = std::max(worst_rel_far, std::fabs(e) >= FLT_MIN ? err / std::fabs(e) : err / FLT_MIN);
      else
        worst = std::max(worst, err / ulp);
    }
    EXPECT_LE(worst, f.max_ulps) << op_name(f.kind);
    EXPECT_LE(worst_rel_far, 2e-5) << op_name(f.kind);
    RecordProperty(std::string(op_name(f.kind)) + "_max_ulp", std::to_string(worst));
    std::printf("%s: max %.2f ulp (gelu_tanh below -2: max relative %.2g)\n", std::string(op_name(f.kind)).c_str(),
                worst, worst_rel_far);
  }
}

}  // namespace
}  // namespace ltx::test
