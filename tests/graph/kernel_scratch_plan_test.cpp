// A plan lays out its matmul steps' kernel scratch in its arena (one buffer per step, live for that step) and lends
// it while the step runs: peak_bytes() counts it, a run takes no thread-local GEMM buffer, and the results are the
// bits the same kernel gives outside a plan (with its thread-local buffers).
#include <array>
#include <thread>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

TEST(KernelScratchPlan, PeakCountsTheGemmScratchAndARunAllocatesNone) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const Shape xs{2, 400, 600};
  const Tensor w = random_tensor(DType::BF16, {200, 600}, 2), bias = random_tensor(DType::BF16, {200}, 3);
  Graph g;
  const Value x = g.input("x", DType::BF16, xs);
  g.output(linear(x, g.constant("w", w), g.constant("bias", bias)), "y");  // one step: fused[MatMul Add]
  auto plan = compile(g, cpu_backend(), no_dump());
  ASSERT_EQ(plan->stats().n_steps, 1);

  const std::array<TensorMeta, 2> in{TensorMeta{DType::BF16, xs}, TensorMeta{DType::BF16, w.shape()}};
  const size_t scratch = cpu::matmul_scratch_bytes({false, true}, in, {DType::BF16, {2, 400, 200}}, true);
  EXPECT_GT(scratch, 0u);
  EXPECT_EQ(plan->stats().scratch_bytes, scratch);
  EXPECT_EQ(plan->peak_bytes(), scratch + 2 * 400 * 200 * 2);  // the scratch beside the output, both live

  // Each run on a fresh thread, whose thread-local GEMM buffers are empty: only a lent span avoids allocating.
  const Tensor xv = random_tensor(DType::BF16, xs, 1);
  Tensor in_plan, outside;
  int64_t plan_fallbacks = -1, outside_fallbacks = -1;
  std::thread([&] {
    const int64_t before = cpu::gemm::fallback_allocations();
    in_plan = plan->run({xv})[0].clone();
    plan_fallbacks = cpu::gemm::fallback_allocations() - before;
  }).join();
  EXPECT_EQ(plan_fallbacks, 0);
  std::thread([&] {  // the same computation, op by op outside any plan
    const int64_t before = cpu::gemm::fallback_allocations();
    const Tensor mm = Tensor::empty(DType::BF16, {2, 400, 200});
    cpu::run(OpKind::MatMul, MatMulAttrs{false, true}, std::array<Tensor, 2>{xv, w}, mm);
    outside_fallbacks = cpu::gemm::fallback_allocations() - before;
  })
      .join();
  EXPECT_GT(outside_fallbacks, 0);  // the check above would have seen an allocation without the span

  // The same bits as the step's program, bf16(x·wᵀ + bias), run by the kernel outside a plan.
  FusedProgram program;
  program.n_leaves = 3;
  FusedInstr mm, add;
  mm.kind = OpKind::MatMul;
  mm.attrs = MatMulAttrs{false, true};
  mm.n_args = 2;
  mm.args[0] = 0;
  mm.args[1] = 1;
  add.kind = OpKind::Add;
  add.n_args = 2;
  add.args[0] = 3;  // the product
  add.args[1] = 2;
  program.instrs = {mm, add};
  std::thread([&] {
    outside = Tensor::empty(DType::BF16, {2, 400, 200});
    cpu::run_fused(program, std::array<Tensor, 3>{xv, w, bias}, outside);
  }).join();
  EXPECT_EQ(max_abs_diff(in_plan, outside), 0.0f);
}

}  // namespace
}  // namespace ltx::test
