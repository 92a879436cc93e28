// CompileOptions::inputs_in_arena: the plan holds its inputs in its arena (Plan::input(i), Plan::run()), each live
// from the start of a run to its last reader, so their space serves later steps and peak_bytes() counts them.
#include "backend/cpu/matmul/matmul_gemm.h"
#include "graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

CompileOptions holding() {
  CompileOptions o = no_dump();
  o.inputs_in_arena = true;
  return o;
}

// y = ((a·b)·(a·b))·(...)²: a and b are read only by the first step.
void build_chain(Graph& g) {
  const Value a = g.input("a", DType::F32, {64, 64});
  const Value b = g.input("b", DType::F32, {64, 64});
  const Value s1 = matmul(a, b);
  const Value s2 = matmul(s1, s1);
  g.output(matmul(s2, s2), "y");
}

Tensor write_input(const Plan& plan, size_t i, const Tensor& value) {
  Tensor dst = plan.input(i);
  dst.copy_from(value);
  return dst;
}

// Inputs live [start, first step]; the second and third products reuse their space: the arena is the first step's
// three buffers (a, b, a·b), not five, and its result matches a plan that reads the caller's tensors.
TEST(HeldInputs, InputsAreArenaBuffersReusedAfterTheirLastReader) {
  const size_t one = 64 * 64 * 4;
  Graph g_held, g_caller;
  build_chain(g_held);
  build_chain(g_caller);
  auto held = compile(g_held, cpu_backend(), holding());
  auto caller = compile(g_caller, cpu_backend(), no_dump());
  EXPECT_TRUE(held->holds_inputs());
  EXPECT_FALSE(caller->holds_inputs());
  EXPECT_EQ(held->stats().input_bytes, 2 * one);
  EXPECT_EQ(caller->stats().input_bytes, 0u);
  // Each product's GEMM scratch (packed 64×64 blocks) is live during its step only, beside the buffers.
  EXPECT_EQ(held->stats().scratch_bytes > 0, cpu::gemm::avx512_available());  // else the reference: none
  EXPECT_EQ(held->stats().scratch_bytes, caller->stats().scratch_bytes);
  EXPECT_EQ(held->peak_bytes(), 3 * one + held->stats().scratch_bytes);
  EXPECT_EQ(caller->peak_bytes(), 2 * one + caller->stats().scratch_bytes);
  EXPECT_EQ(held->stats().naive_bytes, 5 * one);

  for (uint32_t seed : {1u, 3u}) {  // a second run writes new inputs over space the first run reused
    const Tensor a = random_tensor(DType::F32, {64, 64}, seed), b = random_tensor(DType::F32, {64, 64}, seed + 1);
    write_input(*held, 0, a);
    write_input(*held, 1, b);
    const Tensor got = held->run()[0].clone();
    const Tensor expect = caller->run({a, b})[0];
    EXPECT_EQ(max_abs_diff(got, expect), 0.0f);
    // run(inputs) on a holding plan copies them into its slots first.
    EXPECT_EQ(max_abs_diff(held->run({a, b})[0], expect), 0.0f);
  }
}

// Each input slot is a view into the arena of the declared dtype and shape, inputs live at once never overlap, and
// nothing the caller passed to run(inputs) is referenced afterwards.
TEST(HeldInputs, InputViewsAreDisjointArenaSlots) {
  Graph g;
  const Value x = g.input("x", DType::F32, {3, 5});
  const Value m = g.input("m", DType::BF16, {5});
  g.input("unused", DType::F32, {7});  // read by nothing: still gets a writable slot
  g.output(mul(x, cast(m, DType::F32)), "y");
  g.output(x, "x_again");  // an input that is an output lives to the end
  auto plan = compile(g, cpu_backend(), holding());
  ASSERT_TRUE(plan->holds_inputs());
  EXPECT_EQ(plan->input(0).dtype(), DType::F32);
  EXPECT_EQ(plan->input(0).shape(), (Shape{3, 5}));
  EXPECT_EQ(plan->input(1).dtype(), DType::BF16);
  EXPECT_EQ(plan->input(2).shape(), (Shape{7}));
  const std::byte* lo[3];
  const std::byte* hi[3];
  for (size_t i = 0; i < 3; ++i) {
    lo[i] = plan->input(i).raw();
    hi[i] = lo[i] + plan->input(i).nbytes();
    EXPECT_EQ(plan->input(i).storage(), plan->input(0).storage());
  }
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = i + 1; j < 3; ++j) EXPECT_TRUE(hi[i] <= lo[j] || hi[j] <= lo[i]) << i << " overlaps " << j;

  const Tensor x_val = random_tensor(DType::F32, {3, 5}, 5), m_val = random_tensor(DType::BF16, {5}, 6),
               u_val = random_tensor(DType::F32, {7}, 7);
  const long before = x_val.storage().use_count();
  const auto out = plan->run({x_val, m_val, u_val});
  EXPECT_EQ(x_val.storage().use_count(), before);
  const Tensor expect = ref(OpKind::Mul, NoAttrs{}, {x_val, ref(OpKind::Cast, CastAttrs{DType::F32}, {m_val})});
  EXPECT_EQ(max_abs_diff(out[0], expect), 0.0f);
  EXPECT_EQ(max_abs_diff(out[1], x_val), 0.0f);
}

TEST(HeldInputs, MisuseIsOneClearError) {
  Graph g1, g2;
  g1.output(silu(g1.input("x", DType::F32, {2, 3})), "y");
  g2.output(silu(g2.input("x", DType::F32, {2, 3})), "y");
  auto caller = compile(g1, cpu_backend(), no_dump());
  auto held = compile(g2, cpu_backend(), holding());
  EXPECT_THROW(caller->input(0), Error);  // it reads the caller's tensors
  EXPECT_THROW(caller->run(), Error);     // ... so they must be passed
  EXPECT_THROW(held->input(1), Error);    // one input only
  EXPECT_THROW(held->run({Tensor::empty(DType::F32, {3, 2})}), Error);
  CompileOptions priced = holding();
  priced.allocate = false;
  Graph g3;
  g3.output(silu(g3.input("x", DType::F32, {2, 3})), "y");
  EXPECT_THROW(compile(g3, cpu_backend(), priced)->run(), Error);
}

}  // namespace
}  // namespace ltx::test
