// The seam between the graph layer and a backend (backend/backend.h, graph/plan.h): a whole-graph backend gets the
// graph itself, persistent inputs keep their value across runs, one plan's output feeds another's input, and a
// step backend is offered a prepared-weights slot for fused steps led by a MatMul over constant weights.
#include "graph/step_plan.h"
#include "graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

// A whole-graph backend for the test: it hands the graph to the CPU's compiler and counts the graphs it was given.
class CountingGraphBackend final : public Backend {
 public:
  const char* name() const override { return "counting"; }
  bool supports(OpKind, std::span<const TensorMeta>, const TensorMeta&) const override { return true; }
  bool supports(const FusedProgram&, std::span<const TensorMeta>, const TensorMeta&) const override { return true; }
  std::unique_ptr<Plan> compile_graph(const Graph& graph, const CompileOptions& options) const override {
    ++graphs;
    return returns_plans ? compile(graph, cpu_backend(), options) : nullptr;
  }
  mutable int graphs = 0;
  bool returns_plans = true;
};

void build_product(Graph& g) {
  const Value a = g.input("a", DType::F32, {8, 8});
  const Value b = g.input("b", DType::F32, {8, 8});
  g.output(matmul(a, b), "y");
}

TEST(PlanSeam, AWholeGraphBackendCompilesTheGraphItselfOncePerSignature) {
  CountingGraphBackend backend;
  PlanCache cache(backend);
  const Tensor a = random_tensor(DType::F32, {8, 8}, 1), b = random_tensor(DType::F32, {8, 8}, 2);
  Graph on_cpu;
  build_product(on_cpu);
  const Tensor expect = compile(on_cpu, cpu_backend(), no_dump())->run({a, b})[0].clone();
  for (int call = 0; call < 2; ++call) {
    Graph g;
    build_product(g);
    Plan& plan = cache.get(g, no_dump());
    EXPECT_EQ(max_abs_diff(plan.run({a, b})[0], expect), 0.0f);
  }
  EXPECT_EQ(backend.graphs, 1);
  EXPECT_EQ(cache.compiles(), 1);
  EXPECT_EQ(&cache.backend(), &backend);

  backend.returns_plans = false;  // a backend that neither runs steps nor returns a plan is a clear error
  Graph g;
  build_product(g);
  try {
    compile(g, backend, no_dump());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the counting backend neither runs steps nor compiles graphs"),
              std::string::npos)
        << e.what();
  }
}

CompileOptions with_persistent(std::vector<std::string> names) {
  CompileOptions o = no_dump();
  o.inputs_in_arena = true;
  o.persistent_inputs = std::move(names);
  return o;
}

// y = ((x·c)·x)·x: c is read by the first step only.
void build_context_chain(Graph& g) {
  const Value x = g.input("x", DType::F32, {16, 16});
  const Value c = g.input("context", DType::F32, {16, 16});
  g.output(matmul(matmul(matmul(x, c), x), x), "y");
}

// With c persistent: written once under a version, it keeps its value through runs whose other input changes and
// whose later steps reuse its space when it is not.
TEST(PlanSeam, APersistentInputKeepsItsValueAcrossRuns) {
  const Tensor context = random_tensor(DType::F32, {16, 16}, 7);
  {  // not persistent: a later step writes over c's space
    Graph g;
    build_context_chain(g);
    CompileOptions holding = with_persistent({});
    auto plan = compile(g, cpu_backend(), holding);
    plan->run({random_tensor(DType::F32, {16, 16}, 1), context});
    EXPECT_GT(max_abs_diff(plan->input(1), context), 0.0f);
  }
  Graph g;
  build_context_chain(g);
  auto plan = compile(g, cpu_backend(), with_persistent({"context"}));
  EXPECT_TRUE(plan->input_is_persistent(1));
  EXPECT_FALSE(plan->input_is_persistent(0));
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Tensor xv = random_tensor(DType::F32, {16, 16}, seed);
    Tensor(plan->input(0)).copy_from(xv);
    EXPECT_FALSE(plan->reuse_input(0, 5));  // not persistent: always written
    const bool reused = plan->reuse_input(1, 42);
    EXPECT_EQ(reused, seed != 1u);
    if (!reused) Tensor(plan->input(1)).copy_from(context);
    const Tensor expect = compile(g, cpu_backend(), no_dump())->run({xv, context})[0].clone();
    EXPECT_EQ(max_abs_diff(plan->run()[0], expect), 0.0f) << "run with x seed " << seed;
  }
  EXPECT_FALSE(plan->reuse_input(1, 43));  // another version: the caller writes it again
  EXPECT_TRUE(plan->reuse_input(1, 43));
  plan->release_arena_pages();  // the arena's pages go: no input holds a value any more
  EXPECT_FALSE(plan->reuse_input(1, 43));
  plan->run({context, context});  // run(inputs) writes every input: no version holds after it
  EXPECT_FALSE(plan->reuse_input(1, 43));
}

TEST(PlanSeam, PersistentInputsNeedAHoldingPlanAndAnInputOfThatName) {
  Graph g;
  build_product(g);
  CompileOptions not_holding = with_persistent({"a"});
  not_holding.inputs_in_arena = false;
  EXPECT_THROW(compile(g, cpu_backend(), not_holding), Error);
  try {
    compile(g, cpu_backend(), with_persistent({"c"}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("persistent input 'c' is not an input of the graph"), std::string::npos)
        << e.what();
  }
}

TEST(PlanSeam, AnOutputFeedsTheNextPlansInput) {
  Graph g1, g2;
  build_product(g1);
  const Value y = g2.input("y", DType::F32, {8, 8});
  g2.output(matmul(y, y), "z");
  auto first = compile(g1, cpu_backend(), no_dump());
  CompileOptions holding = no_dump();
  holding.inputs_in_arena = true;
  auto second = compile(g2, cpu_backend(), holding);
  const Tensor a = random_tensor(DType::F32, {8, 8}, 3), b = random_tensor(DType::F32, {8, 8}, 4);
  const Tensor product = first->run({a, b})[0].clone();
  const Tensor expect = second->run({product})[0].clone();
  Tensor(second->input(0)).copy_from(Tensor::empty(DType::F32, {8, 8}));  // zeros: the last run's input goes
  second->take_input(0, *first, 0);
  EXPECT_EQ(max_abs_diff(second->run()[0], expect), 0.0f);
  // A mismatched producer is refused, naming both sides.
  Graph g3;
  g3.output(g3.input("w", DType::F32, {4, 4}), "w");
  auto other = compile(g3, cpu_backend(), no_dump());
  other->run({random_tensor(DType::F32, {4, 4}, 5)});
  EXPECT_THROW(second->take_input(0, *other, 0), Error);
}

// A step backend that runs on the CPU's kernels and records whether each fused step led by a MatMul came with a
// prepared-weights slot.
class RecordingStepBackend final : public StepBackend {
 public:
  const char* name() const override { return "recording"; }
  bool supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const override {
    return cpu_backend().supports(op, in, out);
  }
  bool supports(const FusedProgram& p, std::span<const TensorMeta> leaves, const TensorMeta& out) const override {
    return cpu_backend().supports(p, leaves, out);
  }
  size_t scratch_bytes(OpKind op, const OpAttrs& attrs, std::span<const TensorMeta> in,
                       const TensorMeta& out) const override {
    return cpu_backend().scratch_bytes(op, attrs, in, out);
  }
  size_t scratch_bytes(const FusedProgram& p, std::span<const TensorMeta> leaves,
                       const TensorMeta& out) const override {
    return cpu_backend().scratch_bytes(p, leaves, out);
  }
  void run(OpKind op, const OpAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
           const StepContext& context) const override {
    cpu_backend().run(op, attrs, in, out, context);
  }
  void run(const FusedProgram& p, std::span<const Tensor> leaves, const Tensor& out,
           const StepContext& context) const override {
    if (p.instrs.front().kind == OpKind::MatMul) matmul_slots.push_back(context.prepared != nullptr);
    cpu_backend().run(p, leaves, out, context);
  }
  bool permute_may_be_view(OpKind reader, int operand) const override {
    return cpu_backend().permute_may_be_view(reader, operand);
  }
  mutable std::vector<bool> matmul_slots;
};

TEST(PlanSeam, AFusedMatmulOverConstantWeightsGetsAPreparedSlot) {
  RecordingStepBackend backend;
  Graph g;
  const Value x = g.input("x", DType::F32, {4, 8});
  const Tensor w = random_tensor(DType::F32, {8, 8}, 9), b = random_tensor(DType::F32, {8}, 10);
  const Value h = gelu_tanh(linear(x, g.constant("w", w), g.constant("b", b)));  // weights: constants
  g.output(gelu_tanh(matmul(h, x, false, true)), "y");                           // weights: an activation
  auto plan = compile(g, backend, no_dump());
  plan->run({random_tensor(DType::F32, {4, 8}, 11)});
  EXPECT_EQ(backend.matmul_slots, (std::vector<bool>{true, false}));

  CompileOptions unprepared = no_dump();
  unprepared.prepare_weights = false;
  backend.matmul_slots.clear();
  compile(g, backend, unprepared)->run({random_tensor(DType::F32, {4, 8}, 11)});
  EXPECT_EQ(backend.matmul_slots, (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace ltx::test
