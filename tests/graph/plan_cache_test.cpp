#include <algorithm>

#include "core/system_memory.h"
#include "graph_test_util.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

void build_block(Graph& g, const Tensor& w, const Tensor& b, const Shape& shape) {
  Value x = g.input("x", DType::F32, shape);
  Value h = gelu_tanh(linear(rms_norm(x, std::nullopt, 1e-6f), g.constant("w", w), g.constant("b", b)));
  g.output(add(x, h), "y");
}

// The second run at a shape plans nothing and allocates no tensor memory.
TEST(PlanCache, SecondRunAtTheSameShapePlansAndAllocatesNothing) {
  const Tensor w = random_tensor(DType::F32, {16, 16}, 1), b = random_tensor(DType::F32, {16}, 2);
  const Tensor x = random_tensor(DType::F32, {3, 16}, 3);
  PlanCache cache(cpu_backend());
  Tensor first;
  {
    Graph g;
    build_block(g, w, b, {3, 16});
    first = cache.get(g, no_dump()).run({x})[0].clone();
  }
  EXPECT_EQ(cache.compiles(), 1);
  const uint64_t allocations = Storage::allocation_count();
  {
    Graph g;
    build_block(g, w, b, {3, 16});
    Plan& plan = cache.get(g, no_dump());
    const Tensor again = plan.run({x})[0];
    EXPECT_EQ(max_abs_diff(again, first), 0.0f);
  }
  EXPECT_EQ(cache.compiles(), 1);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(Storage::allocation_count(), allocations);
}

// Between phases of a generation a cached plan's arena goes back to the OS; the plan stays compiled and its next
// run gives the same bits without allocating. (RssAnon: under ASan too, the arena's pages are the process's own.)
TEST(PlanCache, ReleasedArenaPagesLeaveAndTheNextRunIsUnchanged) {
  const Tensor w = random_tensor(DType::F32, {256, 256}, 1), b = random_tensor(DType::F32, {256}, 2);
  const Tensor x = random_tensor(DType::F32, {32768, 256}, 3);  // 32 MiB per activation
  PlanCache cache(cpu_backend());
  Graph g;
  build_block(g, w, b, x.shape());
  Plan& plan = cache.get(g, no_dump());
  ASSERT_GE(plan.peak_bytes(), size_t{64} << 20);
  const Tensor first = plan.run({x})[0].clone();
  const size_t before = resident_anonymous_bytes();
  cache.release_arena_pages();
  const size_t after = resident_anonymous_bytes();
  EXPECT_GE(before - std::min(before, after), plan.peak_bytes() / 2) << before << " -> " << after;
  const uint64_t allocations = Storage::allocation_count();
  EXPECT_EQ(max_abs_diff(plan.run({x})[0], first), 0.0f);
  EXPECT_EQ(Storage::allocation_count(), allocations);
  EXPECT_EQ(cache.compiles(), 1);
}

TEST(PlanCache, OtherShapesOrWeightsCompileAgain) {
  const Tensor w = random_tensor(DType::F32, {16, 16}, 1), b = random_tensor(DType::F32, {16}, 2);
  const Tensor w2 = w.clone();
  PlanCache cache(cpu_backend());
  Graph g1, g2, g3;
  build_block(g1, w, b, {3, 16});
  build_block(g2, w, b, {4, 16});
  build_block(g3, w2, b, {3, 16});
  cache.get(g1, no_dump());
  cache.get(g2, no_dump());
  cache.get(g3, no_dump());
  EXPECT_EQ(cache.compiles(), 3);
  EXPECT_EQ(cache.size(), 3u);
}

// max_peak_bytes() is the largest activation peak among the cached plans: the bigger shape's here.
TEST(PlanCache, MaxPeakBytesIsTheLargestPlansPeak) {
  const Tensor w = random_tensor(DType::F32, {16, 16}, 1), b = random_tensor(DType::F32, {16}, 2);
  PlanCache cache(cpu_backend());
  EXPECT_EQ(cache.max_peak_bytes(), 0u);
  Graph small, big;
  build_block(small, w, b, {3, 16});
  build_block(big, w, b, {64, 16});
  const size_t small_peak = cache.get(small, no_dump()).peak_bytes();
  EXPECT_EQ(cache.max_peak_bytes(), small_peak);
  const size_t big_peak = cache.get(big, no_dump()).peak_bytes();
  EXPECT_GT(big_peak, small_peak);
  EXPECT_EQ(cache.max_peak_bytes(), big_peak);
}

}  // namespace
}  // namespace ltx::test
