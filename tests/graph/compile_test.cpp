#include <cstring>

#include "graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

// The graph `build` makes, compiled twice: with fusion, as production compiles, and without it (the oracle).
struct FusedAndPlain {
  template <class Build>
  explicit FusedAndPlain(Build build) {
    build(fused_graph);
    build(plain_graph);
    CompileOptions unfused = no_dump();
    unfused.fuse = false;
    fused = compile(fused_graph, cpu_backend(), no_dump());
    plain = compile(plain_graph, cpu_backend(), unfused);
  }
  Graph fused_graph, plain_graph;
  std::unique_ptr<Plan> fused, plain;
};

// x [5, 7] · Wᵀ [11, 7] + b → gelu: one step, the matmul with bias and activation as its epilogue.
TEST(Compile, FusesBiasAndActivationIntoTheMatmul) {
  const Tensor x = random_tensor(DType::F32, {5, 7}, 1), w = random_tensor(DType::F32, {11, 7}, 2),
               b = random_tensor(DType::F32, {11}, 3);
  Graph g;
  Value y = gelu(linear(g.input("x", DType::F32, {5, 7}), g.constant("w", w), g.constant("b", b)));
  g.output(y, "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  EXPECT_EQ(plan->stats().n_steps, 1);
  EXPECT_EQ(plan->stats().n_fused_ops, 2);  // the matmul and the add folded into the gelu step
  const Tensor got = plan->run({x})[0];

  const Tensor mm = ref(OpKind::MatMul, MatMulAttrs{false, true}, {x, w});
  const Tensor expect = ref(OpKind::Gelu, NoAttrs{}, {ref(OpKind::Add, NoAttrs{}, {mm, b})});
  EXPECT_LE(max_abs_diff(got, expect), 1e-6f);
}

// AdaLN modulation x·(1+scale)+shift and a gated residual r + g·y, broadcasting [B,1,D] over [B,T,D].
TEST(Compile, FusesModulationAndGatedResidual) {
  const Shape full{2, 9, 6}, row{2, 1, 6};
  const Tensor x = random_tensor(DType::F32, full, 4), r = random_tensor(DType::F32, full, 5),
               sc = random_tensor(DType::F32, row, 6), sh = random_tensor(DType::F32, row, 7),
               gate = random_tensor(DType::F32, row, 8);
  Graph g;
  // Declared one per statement: the run binds inputs in declaration order.
  Value vx = g.input("x", DType::F32, full);
  Value vr = g.input("r", DType::F32, full);
  Value vscale = g.input("scale", DType::F32, row);
  Value vshift = g.input("shift", DType::F32, row);
  Value vgate = g.input("gate", DType::F32, row);
  Value out = add(vr, mul(vgate, silu(modulate(vx, vscale, vshift))));
  g.output(out, "out");
  auto plan = compile(g, cpu_backend(), no_dump());
  // 1+scale is its own small step; everything at full size is one pass.
  EXPECT_EQ(plan->stats().n_steps, 2);
  const Tensor got = plan->run({x, r, sc, sh, gate})[0];

  const Tensor one_plus = ref(OpKind::Scale, ScaleAttrs{1.0f, 1.0f}, {sc});
  const Tensor mod = ref(OpKind::Add, NoAttrs{}, {ref(OpKind::Mul, NoAttrs{}, {x, one_plus}), sh});
  const Tensor gated = ref(OpKind::Mul, NoAttrs{}, {gate, ref(OpKind::Silu, NoAttrs{}, {mod})});
  const Tensor expect = ref(OpKind::Add, NoAttrs{}, {r, gated});
  EXPECT_LE(max_abs_diff(got, expect), 1e-6f);
}

TEST(Compile, UnfusedPlanMatchesFused) {
  const Tensor x = random_tensor(DType::F32, {3, 17}, 9), a = random_tensor(DType::F32, {17}, 10);
  auto build = [&](Graph& g) {
    Value v = g.input("x", DType::F32, {3, 17});
    g.output(tanh(scale(add(mul(v, g.constant("a", a)), v), 0.5f, 0.25f)), "y");
  };
  FusedAndPlain plans(build);
  auto& fused_plan = plans.fused;
  auto& plain_plan = plans.plain;
  EXPECT_EQ(fused_plan->stats().n_steps, 1);
  EXPECT_EQ(plain_plan->stats().n_steps, 4);
  EXPECT_LE(max_abs_diff(fused_plan->run({x})[0], plain_plan->run({x})[0]), 1e-6f);
}

// A Cast to bf16 of an f32 chain becomes that chain's store: one step, bytes equal to the unfused plan (which
// materializes the f32 result and rounds it in a separate Cast). A bf16 chain cast to f32 keeps its own rounding
// step, and a chain with a second use is not absorbed.
TEST(Compile, FoldsCastOfF32ChainIntoItsStore) {
  const Tensor x = random_tensor(DType::F32, {3, 37}, 11), a = random_tensor(DType::F32, {37}, 12);
  auto build = [&](Graph& g) {
    Value v = g.input("x", DType::F32, {3, 37});
    const Value chain = gelu_tanh(modulate(v, g.constant("a", a), v));
    g.output(cast(chain, DType::BF16), "y");
    g.output(cast(add(cast(v, DType::BF16), g.constant("b", a)), DType::F32), "z");
  };
  FusedAndPlain plans(build);
  auto& fused_plan = plans.fused;
  auto& plain_plan = plans.plain;
  // y: 1+a (a smaller shape, its own step) and one fused step through the cast; z: cast(v), the bf16 add, its
  // cast to f32.
  EXPECT_EQ(fused_plan->stats().n_steps, 5);
  const auto got = fused_plan->run({x});
  const auto expect = plain_plan->run({x});
  ASSERT_EQ(got[0].dtype(), DType::BF16);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), expect[i].nbytes());
    EXPECT_EQ(std::memcmp(got[i].raw(), expect[i].raw(), got[i].nbytes()), 0) << "output " << i;
  }
}

// The matmul epilogue in validation precision: a Linear's bias, gelu_tanh and a gated residual (the DiT's
// feed-forward shape of chain) fused into the matmul give the unfused plan's bytes, on the blocked path (K across
// two KC slices) and the panel path (few rows).
TEST(Compile, MatmulEpilogueHasTheUnfusedBitsInF32) {
  for (const int64_t rows : {300, 20}) {
    const Shape xs{2, rows / 2, 600};
    const Tensor x = random_tensor(DType::F32, xs, 21), w = random_tensor(DType::F32, {45, 600}, 22),
                 b = random_tensor(DType::F32, {45}, 23), r = random_tensor(DType::F32, {2, rows / 2, 45}, 24),
                 gate = random_tensor(DType::F32, {2, 1, 45}, 25);
    auto build = [&](Graph& g) {
      Value vx = g.input("x", DType::F32, xs);
      Value vr = g.input("r", DType::F32, r.shape());
      Value vgate = g.input("gate", DType::F32, gate.shape());
      g.output(add(vr, mul(vgate, gelu_tanh(linear(vx, g.constant("w", w), g.constant("b", b))))), "y");
    };
    FusedAndPlain plans(build);
    auto& fused_plan = plans.fused;
    auto& plain_plan = plans.plain;
    EXPECT_EQ(fused_plan->stats().n_steps, 1) << rows;
    const Tensor got = fused_plan->run({x, r, gate})[0];
    const Tensor expect = plain_plan->run({x, r, gate})[0];
    ASSERT_EQ(got.nbytes(), expect.nbytes());
    EXPECT_EQ(std::memcmp(got.raw(), expect.raw(), got.nbytes()), 0) << rows;
  }
}

// A product that something else also reads, or that is an output, keeps its own step; so does the second
// of two products feeding one chain (one leading matmul per chain).
TEST(Compile, MatmulEpilogueOnlyForASingleReader) {
  const Tensor x = random_tensor(DType::F32, {6, 8}, 31), w = random_tensor(DType::F32, {5, 8}, 32),
               b = random_tensor(DType::F32, {5}, 33);
  Graph g;
  Value vx = g.input("x", DType::F32, {6, 8});
  Value p1 = matmul(vx, g.constant("w", w), false, true);
  g.output(add(p1, g.constant("b", b)), "biased");
  g.output(silu(p1), "activated");  // p1 has two readers
  Value p2 = matmul(vx, g.constant("w2", w), false, true);
  g.output(p2, "plain");
  g.output(tanh(add(p2, g.constant("b2", b))), "reads_an_output");
  Value p3 = matmul(vx, g.constant("w3", w), false, true), p4 = matmul(vx, g.constant("w4", w), false, true);
  g.output(mul(p3, p4), "two_products");
  auto plan = compile(g, cpu_backend(), no_dump());
  // p1, add, silu, p2, tanh chain, and p3 (or p4) on its own: p3·p4 is one step led by the other product.
  EXPECT_EQ(plan->stats().n_steps, 7);
  const auto got = plan->run({x});
  const Tensor mm = ref(OpKind::MatMul, MatMulAttrs{false, true}, {x, w});
  EXPECT_LE(max_abs_diff(got[0], ref(OpKind::Add, NoAttrs{}, {mm, b})), 1e-6f);
  EXPECT_LE(max_abs_diff(got[1], ref(OpKind::Silu, NoAttrs{}, {mm})), 1e-6f);
  EXPECT_LE(max_abs_diff(got[2], mm), 1e-6f);
  EXPECT_LE(max_abs_diff(got[4], ref(OpKind::Mul, NoAttrs{}, {mm, mm})), 1e-5f);
}

// A norm without affine read only by an elementwise chain leads that chain (ops/fused.h): the DiT's
// rms_norm → x̂·(1+scale)+shift → bf16 and its head's layer_norm → modulation are one step each, with the unfused
// plan's bytes (validation: f32 chain, then one rounding to bf16 either way); rows across a 16-row group tail.
TEST(Compile, NormLeadsItsModulationWithTheUnfusedBits) {
  const Shape full{2, 37, 300}, row{2, 1, 300};
  const Tensor x = random_tensor(DType::F32, full, 41, -2.0f, 3.0f), sc = random_tensor(DType::F32, row, 42),
               sh = random_tensor(DType::F32, row, 43);
  for (const bool layer : {false, true}) {
    auto build = [&](Graph& g) {
      Value vx = g.input("x", DType::F32, full);
      Value vscale = g.input("scale", DType::F32, row);
      Value vshift = g.input("shift", DType::F32, row);
      const Value normed = layer ? layer_norm(vx, std::nullopt, std::nullopt, 1e-6f)
                                 : rms_norm(vx, std::nullopt, 1e-6f, NormWeight::None);
      g.output(cast(modulate(normed, vscale, vshift), DType::BF16), "y");
    };
    FusedAndPlain plans(build);
    auto& fused_plan = plans.fused;
    auto& plain_plan = plans.plain;
    EXPECT_EQ(fused_plan->stats().n_steps, 2) << layer;  // 1 + scale, then norm → modulation → bf16
    EXPECT_NE(fused_plan->describe().find(layer ? "fused[layer_norm mul add]" : "fused[rms_norm mul add]"),
              std::string::npos)
        << fused_plan->describe();
    const Tensor got = fused_plan->run({x, sc, sh})[0];
    const Tensor expect = plain_plan->run({x, sc, sh})[0];
    ASSERT_EQ(got.nbytes(), expect.nbytes());
    EXPECT_EQ(std::memcmp(got.raw(), expect.raw(), got.nbytes()), 0) << layer;
  }
}

// A norm that two chains read leads both (computed once per chain); one with a weight, one that is an output, one
// that a non-elementwise op also reads and one that a chain of a wider shape also reads keep their own step. Every
// output has the unfused plan's bytes.
TEST(Compile, NormLeadsEveryChainReadingItUnlessAffineStoredOrReadOtherwise) {
  const Tensor x = random_tensor(DType::F32, {6, 8}, 51), w = random_tensor(DType::F32, {8}, 52),
               wide = random_tensor(DType::F32, {2, 6, 8}, 53);
  auto build = [&](Graph& g) {
    Value vx = g.input("x", DType::F32, {6, 8});
    Value shared = rms_norm(vx, std::nullopt, 1e-6f, NormWeight::None);
    g.output(silu(shared), "a");
    g.output(tanh(shared), "b");
    g.output(silu(rms_norm(vx, g.constant("w", w), 1e-6f)), "weighted");
    Value plain = layer_norm(vx, std::nullopt, std::nullopt, 1e-6f);
    g.output(plain, "plain");
    g.output(silu(plain), "reads_an_output");
    Value mixed = layer_norm(vx, std::nullopt, std::nullopt, 1e-5f);
    g.output(silu(mixed), "chain");
    g.output(matmul(mixed, vx, false, true), "product");
    Value widened = rms_norm(vx, std::nullopt, 1e-5f, NormWeight::None);
    g.output(silu(widened), "fits");
    g.output(add(widened, g.constant("wide", wide)), "broadcast_wider");  // a chain of another shape
  };
  FusedAndPlain plans(build);
  auto& plan = plans.fused;
  // fused[rms_norm silu], fused[rms_norm tanh]; weighted norm + silu; plain + silu; mixed + silu + matmul;
  // widened + silu + add.
  EXPECT_EQ(plan->stats().n_steps, 12) << plan->describe();
  const std::string text = plan->describe();
  EXPECT_NE(text.find("fused[rms_norm silu]"), std::string::npos) << text;
  EXPECT_NE(text.find("fused[rms_norm tanh]"), std::string::npos) << text;
  EXPECT_EQ(text.find("fused[layer_norm"), std::string::npos) << text;
  auto& plain_plan = plans.plain;
  const auto got = plan->run({x});
  const auto expect = plain_plan->run({x});
  ASSERT_EQ(got.size(), expect.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), expect[i].nbytes());
    EXPECT_EQ(std::memcmp(got[i].raw(), expect[i].raw(), got[i].nbytes()), 0) << "output " << i;
  }
}

TEST(Compile, RemovesDeadNodes) {
  Graph g;
  Value x = g.input("x", DType::F32, {4, 4});
  Value unused = softmax(matmul(x, x));
  (void)unused;
  g.output(silu(x), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  EXPECT_EQ(plan->stats().n_live, 2);
  EXPECT_EQ(plan->stats().n_steps, 1);
}

TEST(Compile, ReshapeOfAnArenaBufferIsAView) {
  const Tensor x = random_tensor(DType::F32, {6, 4}, 11), w = random_tensor(DType::F32, {8, 4}, 12);
  Graph g;
  Value y = reshape(linear(g.input("x", DType::F32, {6, 4}), g.constant("w", w)), {6, 2, 4});
  g.output(softmax(y), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  EXPECT_EQ(plan->stats().n_aliases, 1);
  EXPECT_EQ(plan->stats().n_steps, 2);
  const Tensor mm = ref(OpKind::MatMul, MatMulAttrs{false, true}, {x, w});
  const Tensor expect = ref(OpKind::Softmax, SoftmaxAttrs{}, {mm.reshape({6, 2, 4})});
  EXPECT_LE(max_abs_diff(plan->run({x})[0], expect), 1e-6f);
}

// A chain of ten same-size ops needs two buffers at a time, not ten.
TEST(Compile, ArenaReusesDeadBuffers) {
  Graph g;
  Value v = g.input("x", DType::F32, {64, 64});
  for (int i = 0; i < 10; ++i) v = softmax(v);
  g.output(v, "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  const size_t one = 64 * 64 * 4;
  EXPECT_EQ(plan->stats().naive_bytes, 10 * one);
  EXPECT_EQ(plan->peak_bytes(), 2 * one);
}

TEST(Compile, RejectsInputsOfTheWrongShapeOrDtype) {
  Graph g;
  g.output(silu(g.input("x", DType::F32, {2, 3})), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  EXPECT_THROW(plan->run({Tensor::empty(DType::F32, {3, 2})}), Error);
  EXPECT_THROW(plan->run({Tensor::empty(DType::BF16, {2, 3})}), Error);
  EXPECT_THROW(plan->run(std::span<const Tensor>{}), Error);
}

TEST(Compile, ShapeErrorsSurfaceWhileBuilding) {
  Graph g;
  Value a = g.input("a", DType::F32, {2, 3}), b = g.input("b", DType::F32, {4, 5});
  EXPECT_THROW(matmul(a, b), Error);
  EXPECT_THROW(add(a, b), Error);
}

TEST(Compile, NonContiguousInputsAreRead) {
  const Tensor base = random_tensor(DType::F32, {5, 3}, 13);
  const Tensor xt = base.transpose(0, 1);  // [3, 5] strided view
  Graph g;
  g.output(gelu(scale(g.input("x", DType::F32, {3, 5}), 2.0f)), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  const Tensor expect = ref(OpKind::Gelu, NoAttrs{}, {ref(OpKind::Scale, ScaleAttrs{2.0f, 0.0f}, {xt})});
  EXPECT_LE(max_abs_diff(plan->run({xt})[0], expect), 1e-6f);
}

}  // namespace
}  // namespace ltx::test

namespace ltx::test {
namespace {

// A plan keeps no reference to the caller's inputs once run returns: a DiT call's inputs (RoPE tables, contexts)
// would otherwise stay alive beside the next call's, raising the peak by their size.
TEST(Compile, RunReleasesItsInputs) {
  Tensor x = random_tensor(DType::F32, {4, 6}, 9);
  const Tensor w = random_tensor(DType::F32, {5, 6}, 10);
  Graph g;
  g.output(ops::gelu(ops::matmul(g.input("x", DType::F32, {4, 6}), g.constant("w", w), false, true)), "y");
  auto plan = compile(g, cpu_backend(), no_dump());
  const long before = x.storage().use_count();
  const Tensor y = plan->run({x})[0].clone();
  EXPECT_EQ(x.storage().use_count(), before);
  EXPECT_EQ(y.shape(), (Shape{4, 5}));
}

}  // namespace
}  // namespace ltx::test
