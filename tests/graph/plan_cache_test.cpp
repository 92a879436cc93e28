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
  PlanCache cache;
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

TEST(PlanCache, OtherShapesOrWeightsCompileAgain) {
  const Tensor w = random_tensor(DType::F32, {16, 16}, 1), b = random_tensor(DType::F32, {16}, 2);
  const Tensor w2 = w.clone();
  PlanCache cache;
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

}  // namespace
}  // namespace ltx::test
