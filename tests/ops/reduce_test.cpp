// Reductions against torch (sum, mean, amax, amin over axis sets, with and without keepdim) in f32 and bf16.
#include <cmath>

#include "golden_a.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax, OpKind::ReduceMin);

// f32: sums of up to 105 values in [-2, 2] in a different order than torch's vectorized cascade; the difference
// is bounded by ~n·ulp(partial sums) ~ 105 · 2.4e-7 in absolute terms, so atol 2e-5 (results are O(1..10));
// max/min are exact.
constexpr Tolerance kF32{2e-5f, 1e-6f};

ReduceAttrs axes(std::initializer_list<int> list, bool keepdim = false) {
  ReduceAttrs a;
  for (int i : list) a.axes[static_cast<size_t>(i)] = true;
  a.keepdim = keepdim;
  return a;
}

struct Case {
  const char* name;
  OpKind kind;
  ReduceAttrs attrs;
  bool exact;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"sum_1", OpKind::ReduceSum, axes({1}), false},
      {"sum_all_keepdim", OpKind::ReduceSum, axes({0, 1, 2}, true), false},
      {"mean_02_keepdim", OpKind::ReduceMean, axes({0, 2}, true), false},
      {"mean_2", OpKind::ReduceMean, axes({2}), false},
      {"max_2", OpKind::ReduceMax, axes({2}), true},
      {"max_01", OpKind::ReduceMax, axes({0, 1}), true},
      {"min_0_keepdim", OpKind::ReduceMin, axes({0}, true), true},
      {"min_12", OpKind::ReduceMin, axes({1, 2}), true},
  };
  return c;
}

const GoldenFile& golden() {
  static const GoldenFile g("reduce");
  return g;
}

TEST(Reduce, MatchesTorchInF32) {
  for (const Case& c : cases()) check_golden(golden(), c.name, c.kind, c.attrs, c.exact ? kExact : kF32);
}

TEST(Reduce, MatchesTorchInBf16) {
  for (const Case& c : cases())
    check_golden(golden(), std::string(c.name) + "_bf16", c.kind, c.attrs, c.exact ? kExact : kBf16);
}

TEST(Reduce, AccumulatesBf16InF32) {
  // 1 + 256 · 2^-8 = 2 in f32; a bf16 accumulator would stay at 1 (1 + 2^-8 rounds back to 1 every step).
  std::vector<float> v(257, 1.0f / 256.0f);
  v[0] = 1.0f;
  const Tensor x = Tensor::from_floats(DType::BF16, Shape{257}, v);
  EXPECT_EQ(run_reference(OpKind::ReduceSum, axes({0}), {x}).to_floats()[0], 2.0f);
}

TEST(Reduce, MaxPropagatesNan) {
  const Tensor x = Tensor::from_floats(DType::F32, Shape{3}, {1.0f, std::nanf(""), 2.0f});
  EXPECT_TRUE(std::isnan(run_reference(OpKind::ReduceMax, axes({0}), {x}).to_floats()[0]));
}

TEST(Reduce, InferenceErrors) {
  const DType f = DType::F32;
  expect_infer_error(OpKind::ReduceSum, axes({}), {{f, {3, 4}}}, {"reduce", "no axes", "[3, 4]"});
  expect_infer_error(OpKind::ReduceMean, axes({2}), {{f, {3, 4}}}, {"reduce", "axis 2", "[3, 4]"});
  expect_infer_error(OpKind::ReduceMax, axes({0}), {{DType::I32, {3}}}, {"reduce", "i32[3]"});
  expect_infer_error(OpKind::ReduceSum, NoAttrs{}, {{f, {3}}}, {"reduce_sum", "attribute"});
}

}  // namespace
}  // namespace ltx::test
