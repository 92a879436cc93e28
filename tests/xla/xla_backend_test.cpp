// The XLA backend on XLA's CPU plugin (scripts/setup installs it): whole graphs run as one executable and match the
// CPU backend; weights are uploaded once and shared; persistent inputs keep their value; one plan's device output
// feeds another; what XLA cannot take and programs it cannot compile are clear errors.
#include "backend/xla/xla_backend.h"

#include "backend/xla/lower_graph.h"
#include "backend/xla/xla_plan.h"
#include "core/float8.h"
#include "graph/graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

const xla::XlaBackend* backend_or_skip() {
  if (xla::default_plugin_path().empty()) return nullptr;
  return &xla::xla_backend();
}
#define XLA_OR_SKIP(name)                                                           \
  const xla::XlaBackend* name = backend_or_skip();                                  \
  if (name == nullptr)                                                              \
  GTEST_SKIP() << "no XLA plugin (scripts/setup installs XLA's CPU plugin; or set " \
                  "LTX_XLA_PLUGIN)"

// A transformer block's shape of work: bf16 weights, a linear, GELU, LayerNorm, heads, RoPE, masked attention, a
// residual, a convolution over the result.
struct Block {
  Tensor w_in = random_tensor(DType::BF16, {32, 16}, 1), b_in = random_tensor(DType::BF16, {32}, 2);
  Tensor w_out = random_tensor(DType::BF16, {16, 32}, 3), conv_w = random_tensor(DType::F32, {4, 2, 3, 3}, 4);
  Tensor cos = random_tensor(DType::F32, {9, 4}, 5), sin = random_tensor(DType::F32, {9, 4}, 6);

  void build(Graph& g) const {
    const Value x = g.input("x", DType::F32, {2, 9, 16});
    const Value mask = g.input("mask", DType::F32, {1, 1, 9, 9});
    Value h = gelu(linear(x, g.constant("w_in", w_in), g.constant("b_in", b_in)));
    h = layer_norm(h, std::nullopt, std::nullopt, 1e-6f);
    const Value heads = permute(reshape(h, {2, 9, 4, 8}), {0, 2, 1, 3});  // [2, 4, 9, 8]
    const Value q = rope(heads, g.constant("cos", cos), g.constant("sin", sin), RopeMode::SplitHalf);
    const Value a = reshape(permute(attention(q, heads, heads, mask), {0, 2, 1, 3}), {2, 9, 32});
    const Value y = add(x, matmul(a, g.constant("w_out", w_out), false, true));
    ConvAttrs c;
    c.spatial = 2;
    c.pad_before = {1, 1, 0};
    c.pad_after = {1, 1, 0};
    c.pad_mode = {PadMode::Replicate, PadMode::Reflect, PadMode::Zeros};
    g.output(y, "y");
    g.output(conv(reshape(y, {1, 2, 9, 16}), g.constant("conv_w", conv_w), std::nullopt, c), "features");
  }
};

TEST(XlaBackend, AWholeGraphMatchesTheCpuBackend) {
  XLA_OR_SKIP(xla);
  const Block block;
  const Tensor x = random_tensor(DType::F32, {2, 9, 16}, 7), mask = random_tensor(DType::F32, {1, 1, 9, 9}, 8);
  Graph on_cpu, on_xla;
  block.build(on_cpu);
  block.build(on_xla);
  const auto cpu = compile(on_cpu, cpu_backend(), no_dump());
  const auto plan = compile(on_xla, *xla, no_dump());
  EXPECT_EQ(plan->stats().n_steps, 1);
  const auto expect = cpu->run({x, mask});
  const auto got = plan->run({x, mask});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_LT(max_rel_diff(got[0], expect[0]), 1e-5);
  EXPECT_LT(max_rel_diff(got[1], expect[1]), 1e-5);
}

// Past 1,024 keys attention loops over blocks of 512 with an online softmax (lower_attention.cpp): the last block
// padded, grouped queries, an additive mask over the keys, causal rows.
TEST(XlaBackend, AttentionOverManyKeysRunsInBlocks) {
  XLA_OR_SKIP(xla);
  const Tensor q = random_tensor(DType::F32, {1, 4, 40, 16}, 30, -2.0f, 2.0f);
  const Tensor k = random_tensor(DType::F32, {1, 2, 1300, 16}, 31, -2.0f, 2.0f);
  const Tensor v = random_tensor(DType::F32, {1, 2, 1300, 16}, 32);
  const Tensor mask = random_tensor(DType::F32, {1, 1, 40, 1300}, 33, -3.0f, 0.0f);
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "masked");
    Graph g;
    std::vector<Value> in = {g.input("q", DType::F32, {1, 4, 40, 16}), g.input("k", DType::F32, {1, 2, 1300, 16}),
                             g.input("v", DType::F32, {1, 2, 1300, 16})};
    std::vector<Tensor> values = {q, k, v};
    if (!causal) {
      in.push_back(g.input("mask", DType::F32, {1, 1, 40, 1300}));
      values.push_back(mask);
    }
    const AttentionAttrs attrs{0.0f, causal};
    g.output(g.op(OpKind::Attention, attrs, in), "o");
    EXPECT_NE(xla::lower_graph(g).mlir.find("stablehlo.while"), std::string::npos) << "the blocked path";
    const auto plan = compile(g, *xla, no_dump());
    EXPECT_LT(max_rel_diff(plan->run(values)[0], ref(OpKind::Attention, attrs, values)), 1e-5);
  }
}

// The plan's memory figure counts XLA's intermediates (its compiled temp bytes): up to 1,024 keys attention holds
// its f32 scores and their exponentials whole (2 heads x 2,048 queries x 1,024 keys x 4 bytes x 2 = 32 MiB);
// beyond, in blocks of 512 keys, what it holds no longer grows with the keys (measured: 17.4 MB at 2,048 and at
// 4,096 keys).
TEST(XlaBackend, ThePlansPeakCountsAttentionsWorkingMemory) {
  XLA_OR_SKIP(xla);
  auto peak = [&](int64_t keys) {
    Graph g;
    const Value q = g.input("q", DType::F32, {1, 2, 2048, 16});
    const Value k = g.input("k", DType::F32, {1, 2, keys, 16}), v = g.input("v", DType::F32, {1, 2, keys, 16});
    g.output(attention(q, k, v), "o");
    return compile(g, *xla, no_dump())->peak_bytes();
  };
  const size_t whole = peak(1024), blocked = peak(2048);
  EXPECT_GE(whole, size_t{2} * 2 * 2048 * 1024 * 4);
  EXPECT_LT(blocked, whole);
  EXPECT_LE(peak(4096), blocked + blocked / 10) << "O(queries x block), not O(queries x keys)";
}

// Transposed convolutions in groups, with output padding, and padded past the kernel's span (the lowering crops).
TEST(XlaBackend, TransposedConvolutionsMatchTheReference) {
  XLA_OR_SKIP(xla);
  const Tensor x = random_tensor(DType::F32, {1, 4, 7}, 50), w = random_tensor(DType::F32, {4, 3, 3}, 51);
  for (const int64_t padding : {1, 3}) {
    SCOPED_TRACE("padding " + std::to_string(padding));
    ConvAttrs c;
    c.spatial = 1;
    c.stride = {3, 1, 1};
    c.groups = 2;
    c.pad_before = {padding, 0, 0};
    c.output_padding = 1;
    Graph g;
    g.output(g.op(OpKind::ConvTranspose1d, c, {g.input("x", DType::F32, {1, 4, 7}), g.constant("w", w)}), "y");
    const auto plan = compile(g, *xla, no_dump());
    EXPECT_LT(max_rel_diff(plan->run({x})[0], ref(OpKind::ConvTranspose1d, c, {x, w})), 1e-6);
  }
}

TEST(XlaBackend, WeightsAreUploadedOnceAndSharedByPlans) {
  XLA_OR_SKIP(xla);
  const Tensor w = random_tensor(DType::BF16, {8, 8}, 9);
  const xla::DeviceTensor first = xla->weight(w);
  EXPECT_EQ(xla->weight(w).get(), first.get());
  const Tensor other = w.clone();  // same values, another tensor: its own upload
  EXPECT_NE(xla->weight(other).get(), first.get());
}

// Weights are parameters, so another set of weights of the same shapes (stage 2's, a LoRA-fused copy) is the same
// program: its plan gets the executable already compiled, and computes with its own weights.
TEST(XlaBackend, OtherWeightsOfTheSameShapesShareTheExecutable) {
  XLA_OR_SKIP(xla);
  const Tensor x = random_tensor(DType::F32, {2, 9, 16}, 20), mask = random_tensor(DType::F32, {1, 1, 9, 9}, 21);
  Block stage1, stage2;
  stage2.w_in = random_tensor(DType::BF16, {32, 16}, 22);
  Graph g1, g2, on_cpu;
  stage1.build(g1);
  stage2.build(g2);
  stage2.build(on_cpu);
  const auto first = compile(g1, *xla, no_dump());
  const int reused = xla->executables().counts().reused;
  const auto second = compile(g2, *xla, no_dump());
  EXPECT_EQ(xla->executables().counts().reused, reused + 1);
  const auto cpu = compile(on_cpu, cpu_backend(), no_dump());
  const Tensor expect = cpu->run({x, mask})[0].clone();
  EXPECT_LT(max_rel_diff(second->run({x, mask})[0], expect), 1e-5);
  EXPECT_GT(max_rel_diff(first->run({x, mask})[0], expect), 1e-2) << "stage 1 keeps its own weights";
}

TEST(XlaBackend, PersistentInputsKeepTheirValueAcrossRuns) {
  XLA_OR_SKIP(xla);
  Graph g;
  const Value x = g.input("x", DType::F32, {4, 8});
  const Value context = g.input("context", DType::F32, {8, 8});
  g.output(matmul(x, context), "y");
  CompileOptions options = no_dump();
  options.inputs_in_arena = true;
  options.persistent_inputs = {"context"};
  const auto plan = compile(g, *xla, options);
  const Tensor context_value = random_tensor(DType::F32, {8, 8}, 10);
  for (int step = 0; step < 3; ++step) {
    const Tensor x_value = random_tensor(DType::F32, {4, 8}, 11 + step);
    Tensor(plan->input(0)).copy_from(x_value);
    if (!plan->reuse_input(1, 42)) {
      EXPECT_EQ(step, 0) << "written once, then reused";
      Tensor(plan->input(1)).copy_from(context_value);
    }
    const Tensor expect = ref(OpKind::MatMul, MatMulAttrs{}, {x_value, context_value});
    EXPECT_LT(max_rel_diff(plan->run()[0], expect), 1e-6);
  }
  plan->release_arena_pages();
  EXPECT_FALSE(plan->reuse_input(1, 42)) << "released device buffers hold no value";
}

TEST(XlaBackend, APlanTakesAnotherPlansOutputOnTheDevice) {
  XLA_OR_SKIP(xla);
  Graph first, second;
  first.output(silu(first.input("x", DType::F32, {3, 5})), "h");
  second.output(scale(second.input("h", DType::F32, {3, 5}), 2.0f, 1.0f), "y");
  const auto producer = compile(first, *xla, no_dump());
  const auto consumer = compile(second, *xla, no_dump());
  const Tensor x = random_tensor(DType::F32, {3, 5}, 12);
  const Tensor h = producer->run({x})[0].clone();
  consumer->take_input(0, *producer, 0);
  const Tensor y = consumer->run()[0].clone();
  EXPECT_EQ(max_abs_diff(y, consumer->run({h})[0]), 0.0f);

  Graph wrong;
  wrong.output(wrong.input("h", DType::F32, {5, 3}), "y");
  EXPECT_THROW(compile(wrong, *xla, no_dump())->take_input(0, *producer, 0), Error);
}

// Random weights of a quantized type (8-bit floats are rounded from f32 values, as a checkpoint's are).
Tensor weight_of(DType type, const Shape& shape, uint32_t seed) {
  if (type != DType::F8_E4M3) return random_tensor(type, shape, seed);
  const std::vector<float> values = random_tensor(DType::F32, shape, seed).to_floats();
  Tensor w = Tensor::empty(type, shape);
  quantize_f8_e4m3(values.data(), reinterpret_cast<uint8_t*>(w.raw()), shape.numel());
  return w;
}

TEST(XlaBackend, GgufWeightsAreDecodedOnTheDevice) {
  XLA_OR_SKIP(xla);
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::F8_E4M3}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    const Tensor w = weight_of(type, {3, 512}, 13), x = random_tensor(DType::F32, {2, 512}, 14);
    const Tensor ids = Tensor::from_ints(DType::I32, {4}, std::vector<int64_t>{2, 0, 1, 2});
    Graph g;
    const Value weight = g.constant("w", w);
    g.output(matmul(g.input("x", DType::F32, {2, 512}), weight, false, true), "y");
    g.output(gather(weight, g.input("ids", DType::I32, {4})), "rows");
    const auto plan = compile(g, *xla, no_dump());
    const auto got = plan->run({x, ids});
    EXPECT_LT(max_rel_diff(got[0], ref(OpKind::MatMul, MatMulAttrs{false, true}, {x, w})), 1e-6);
    EXPECT_EQ(max_abs_diff(got[1], ref(OpKind::Gather, NoAttrs{}, {w, ids})), 0.0f) << "decoded exactly";
  }
}

// bf16 activations times bf16 or 8-bit float weights: the dot takes bf16 operands with an f32 result (no f32 copy of
// the weight), the reference's exact products and f32 sums, rounded once to bf16 (at most one bf16 ulp apart).
TEST(XlaBackend, Bf16MatmulsKeepTheirOperandsInBf16) {
  XLA_OR_SKIP(xla);
  const Tensor x = random_tensor(DType::BF16, {5, 96}, 40);
  for (DType type : {DType::BF16, DType::F8_E4M3}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    const Tensor w = weight_of(type, {7, 96}, 41);
    Graph g;
    g.output(matmul(g.input("x", DType::BF16, {5, 96}), g.constant("w", w), false, true), "y");
    EXPECT_NE(xla::lower_graph(g).mlir.find("(tensor<5x96xbf16>, tensor<7x96xbf16>) -> tensor<5x7xf32>"),
              std::string::npos);
    const auto plan = compile(g, *xla, no_dump());
    EXPECT_LT(max_rel_diff(plan->run({x})[0], ref(OpKind::MatMul, MatMulAttrs{false, true}, {x, w})), 8e-3);
  }
}

TEST(XlaBackend, ACompileErrorNamesTheProgram) {
  XLA_OR_SKIP(xla);
  try {
    xla->runtime().compile("module { this is not StableHLO }", "the program computing latents");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiling the program computing latents"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ltx::test
