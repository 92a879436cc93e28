// opt::try_layout (layout_opt.cpp) against the reference kernels (layout_ref.cpp): Slice on every axis with steps,
// negative and clamped bounds; Permute including moves of the innermost axis; Gather with i32/i64 ids of rank 1-2,
// on contiguous and non-contiguous inputs, f32, bf16 and i64, odd sizes. Both move bytes unchanged, so outputs
// must be identical byte for byte.
#include <cstring>
#include <limits>

#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

PermuteAttrs perm(std::initializer_list<int> p) {
  PermuteAttrs a;
  for (int v : p) a.perm[static_cast<size_t>(a.rank++)] = v;
  return a;
}

// The optimized kernel handles the call, and it and the dispatcher both equal the reference exactly.
void expect_same_as_reference(OpKind kind, const OpAttrs& attrs, const std::vector<Tensor>& in, const char* what) {
  const Tensor ref = run_reference(kind, attrs, in);
  Tensor opt = output_for(kind, attrs, in);
  ASSERT_TRUE(cpu::opt::try_layout(kind, attrs, in, opt)) << what;
  const Tensor dispatched = run_dispatched(kind, attrs, in);
  ASSERT_EQ(opt.shape(), ref.shape()) << what;
  EXPECT_EQ(std::memcmp(opt.raw(), ref.raw(), ref.nbytes()), 0) << what;
  EXPECT_EQ(std::memcmp(dispatched.raw(), ref.raw(), ref.nbytes()), 0) << what;
}

std::vector<Tensor> variants(DType dtype, const Shape& shape, uint32_t seed) {
  const Tensor x = random_tensor(dtype, shape, seed);
  return {x, non_contiguous(x)};
}

TEST(LayoutOpt, SliceMatchesReference) {
  const std::vector<SliceAttrs> slices = {
      {0, 1, 4, 1},  {1, 2, 9, 1},     {1, 1, 8, 3},   {2, 0, kEnd, 2}, {-1, -5, -1, 1},
      {-1, 3, 4, 1}, {0, -2, kEnd, 1}, {2, 1, 100, 4}, {1, -7, -1, 2},
  };
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Tensor& x : variants(dtype, Shape{5, 11, 13}, 3))
      for (const SliceAttrs& s : slices) expect_same_as_reference(OpKind::Slice, s, {x}, "slice");
  // Rank 4 with a wide contiguous tail, as the DiT's q/k/v and gate splits.
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Tensor x = random_tensor(dtype, Shape{2, 37, 3, 67}, 5);
    expect_same_as_reference(OpKind::Slice, SliceAttrs{2, 1, 2, 1}, {x}, "slice rank 4");
    expect_same_as_reference(OpKind::Slice, SliceAttrs{-1, 10, 43, 1}, {x}, "slice rank 4 tail");
  }
}

TEST(LayoutOpt, PermuteMatchesReference) {
  const std::vector<PermuteAttrs> perms = {perm({0, 2, 1, 3}), perm({2, 0, 3, 1}), perm({3, 2, 1, 0}),
                                           perm({1, 0, 2, 3}), perm({0, 1, 3, 2})};
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Tensor& x : variants(dtype, Shape{3, 7, 5, 9}, 7))
      for (const PermuteAttrs& p : perms) expect_same_as_reference(OpKind::Permute, p, {x}, "permute");
  const Tensor ids = Tensor::from_ints(DType::I64, Shape{3, 5},
                                       std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14});
  expect_same_as_reference(OpKind::Permute, perm({1, 0}), {ids}, "permute i64");
  const Tensor x5 = random_tensor(DType::F32, Shape{2, 3, 1, 5, 7}, 9);
  expect_same_as_reference(OpKind::Permute, perm({0, 3, 1, 4, 2}), {x5}, "permute rank 5");
}

TEST(LayoutOpt, GatherMatchesReference) {
  const std::vector<int64_t> picks = {4, 0, 10, 4, 7, 1};
  for (DType dtype : {DType::F32, DType::BF16})
    for (const Tensor& table : variants(dtype, Shape{11, 19}, 11))
      for (DType id_type : {DType::I32, DType::I64}) {
        expect_same_as_reference(OpKind::Gather, NoAttrs{}, {table, Tensor::from_ints(id_type, Shape{6}, picks)},
                                 "gather");
        expect_same_as_reference(OpKind::Gather, NoAttrs{}, {table, Tensor::from_ints(id_type, Shape{2, 3}, picks)},
                                 "gather 2-d ids");
      }
}

TEST(LayoutOpt, LeavesOutOfRangeIdsToTheReference) {
  const Tensor table = random_tensor(DType::F32, Shape{5, 3}, 13);
  const std::vector<Tensor> in = {table, Tensor::from_ints(DType::I64, Shape{2}, std::vector<int64_t>{1, 5})};
  Tensor out = output_for(OpKind::Gather, NoAttrs{}, in);
  EXPECT_FALSE(cpu::opt::try_layout(OpKind::Gather, NoAttrs{}, in, out));
}

}  // namespace
}  // namespace ltx::test
