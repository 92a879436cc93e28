// Layout ops (Gather, Concat, Slice, Permute, Reshape, Pad) against torch (F.embedding, torch.cat, Python
// slicing, permute, reshape, F.pad per dimension), exact in every dtype, plus quantized gather and errors.
#include <cstdint>
#include <limits>

#include "golden_a.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Gather, OpKind::Concat, OpKind::Slice, OpKind::Permute, OpKind::Reshape, OpKind::Pad);

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

PermuteAttrs perm(std::initializer_list<int> p) {
  PermuteAttrs a;
  for (int v : p) a.perm[static_cast<size_t>(a.rank++)] = v;
  return a;
}

PadAttrs pads(PadMode mode, std::initializer_list<int64_t> before, std::initializer_list<int64_t> after,
              float value = 0.0f) {
  PadAttrs a;
  std::copy(before.begin(), before.end(), a.before.begin());
  std::copy(after.begin(), after.end(), a.after.begin());
  a.mode = mode;
  a.value = value;
  return a;
}

struct Case {
  const char* name;
  OpKind kind;
  OpAttrs attrs;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"gather_i64", OpKind::Gather, NoAttrs{}},
      {"gather_i32", OpKind::Gather, NoAttrs{}},
      {"concat_axis1", OpKind::Concat, AxisAttrs{1}},
      {"concat_last", OpKind::Concat, AxisAttrs{-1}},
      {"concat_first", OpKind::Concat, AxisAttrs{0}},
      {"slice_step", OpKind::Slice, SliceAttrs{1, 1, 8, 3}},
      {"slice_negative", OpKind::Slice, SliceAttrs{1, -7, -1, 2}},
      {"slice_past_end", OpKind::Slice, SliceAttrs{0, 2, 100, 1}},
      {"slice_last", OpKind::Slice, SliceAttrs{-1, -3, kEnd, 1}},
      {"permute", OpKind::Permute, perm({2, 0, 3, 1})},
      {"reshape", OpKind::Reshape, ReshapeAttrs{Shape{7, 15}}},
      {"pad_zeros", OpKind::Pad, pads(PadMode::Zeros, {1, 0, 2}, {0, 3, 1})},
      {"pad_constant", OpKind::Pad, pads(PadMode::Constant, {0, 2, 1}, {2, 1, 0}, 0.5f)},
      {"pad_reflect", OpKind::Pad, pads(PadMode::Reflect, {2, 1, 4}, {1, 3, 2})},
      {"pad_replicate", OpKind::Pad, pads(PadMode::Replicate, {2, 0, 3}, {3, 4, 1})},
  };
  return c;
}

const GoldenFile& golden() {
  static const GoldenFile g("layout");
  return g;
}

TEST(Layout, MatchesTorch) {
  for (const Case& c : cases()) check_golden(golden(), c.name, c.kind, c.attrs, kExact);
}

// Pure data movement commutes with rounding, so bf16(torch's f32 result) is torch's result on bf16 inputs.
// (Pad's constant 0.5 is exact in bf16.)
TEST(Layout, MovesBf16Exactly) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> in = golden().inputs(c.name);
    for (Tensor& t : in)
      if (dtype_is_float(t.dtype())) t = t.to(DType::BF16);
    const Tensor out = run_reference(c.kind, c.attrs, in);
    EXPECT_EQ(out.dtype(), DType::BF16);
    expect_close(out, golden().output(c.name).to(DType::BF16), 0.0f, 0.0f);
  }
}

TEST(Layout, MovesI64Exactly) {
  // Values above 2^24 would not survive a trip through f32.
  const std::vector<int64_t> a = {(int64_t{1} << 40) + 1, -3, (int64_t{1} << 53) + 7, 5, 6, 7};
  const Tensor x = Tensor::from_ints(DType::I64, Shape{2, 3}, a);
  const Tensor cat = run_reference(OpKind::Concat, AxisAttrs{0}, {x, x});
  std::vector<int64_t> twice = a;
  twice.insert(twice.end(), a.begin(), a.end());
  EXPECT_EQ(cat.to_ints(), twice);
  const Tensor t = run_reference(OpKind::Permute, perm({1, 0}), {x});
  EXPECT_EQ(t.to_ints(), (std::vector<int64_t>{a[0], a[3], a[1], a[4], a[2], a[5]}));
}

TEST(Layout, GatherDequantizesQuantizedRows) {
  for (DType q : {DType::Q8_0, DType::Q4_K}) {
    SCOPED_TRACE(dtype_name(q));
    const int64_t dim = 256;
    const Tensor table = random_tensor(q, Shape{10, dim}, 3);
    const Tensor rows = table.slice(0, 1, 10, 2);  // rows 1, 3, 5, 7, 9: a strided quantized view
    const Tensor ids = Tensor::from_ints(DType::I32, Shape{2, 2}, std::vector<int64_t>{4, 0, 2, 4});
    const Tensor out = run_reference(OpKind::Gather, NoAttrs{}, {rows, ids});
    ASSERT_EQ(out.dtype(), DType::F32);
    ASSERT_EQ(out.shape(), (Shape{2, 2, dim}));
    const auto all = table.to_floats();  // decoded by dequantize_row, row-major [10, dim]
    const auto got = out.to_floats();
    const int64_t table_row[4] = {9, 1, 5, 9};
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t j = 0; j < dim; ++j)
        ASSERT_EQ(got[static_cast<size_t>(r * dim + j)], all[static_cast<size_t>(table_row[r] * dim + j)])
            << r << "," << j;
  }
}

TEST(Layout, GatherRejectsOutOfRangeIds) {
  const Tensor table = random_tensor(DType::F32, Shape{5, 3}, 1);
  for (int64_t bad : {int64_t{5}, int64_t{-1}, int64_t{1} << 40}) {
    const Tensor ids = Tensor::from_ints(DType::I64, Shape{3}, std::vector<int64_t>{0, bad, 2});
    try {
      run_reference(OpKind::Gather, NoAttrs{}, {table, ids});
      ADD_FAILURE() << "id " << bad << " accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("gather"), std::string::npos) << msg;
      EXPECT_NE(msg.find("id " + std::to_string(bad)), std::string::npos) << msg;
      EXPECT_NE(msg.find("[5, 3]"), std::string::npos) << msg;
    }
  }
}

TEST(Layout, EmptySliceWhenStartPassesEnd) {
  const Tensor x = random_tensor(DType::F32, Shape{4, 3}, 2);
  EXPECT_EQ(run_reference(OpKind::Slice, SliceAttrs{0, 3, 1, 1}, {x}).shape(), (Shape{0, 3}));
  EXPECT_EQ(run_reference(OpKind::Slice, SliceAttrs{0, 10, kEnd, 1}, {x}).shape(), (Shape{0, 3}));
}

TEST(Layout, InferenceErrors) {
  const DType f = DType::F32;
  expect_infer_error(OpKind::Gather, NoAttrs{}, {{f, {5}}, {DType::I64, {2}}}, {"gather", "[V, D]", "[5]"});
  expect_infer_error(OpKind::Gather, NoAttrs{}, {{f, {5, 3}}, {f, {2}}}, {"gather", "i32 or i64", "f32[2]"});
  expect_infer_error(OpKind::Concat, AxisAttrs{1}, {{f, {3, 2, 7}}, {f, {3, 2, 6}}},
                     {"concat", "[3, 2, 7]", "[3, 2, 6]"});
  expect_infer_error(OpKind::Concat, AxisAttrs{0}, {{f, {3}}, {DType::BF16, {3}}}, {"concat", "bf16[3]"});
  expect_infer_error(OpKind::Concat, AxisAttrs{2}, {{f, {3, 2}}}, {"concat", "axis 2"});
  expect_infer_error(OpKind::Slice, SliceAttrs{0, 0, 2, 0}, {{f, {3}}}, {"slice", "step"});
  expect_infer_error(OpKind::Slice, SliceAttrs{2, 0, 2, 1}, {{f, {3, 4}}}, {"slice", "axis 2", "[3, 4]"});
  expect_infer_error(OpKind::Permute, perm({0, 0}), {{f, {3, 4}}}, {"permute", "not a permutation", "[3, 4]"});
  expect_infer_error(OpKind::Permute, perm({1, 0}), {{f, {3, 4, 5}}}, {"permute", "[3, 4, 5]"});
  expect_infer_error(OpKind::Reshape, ReshapeAttrs{Shape{5, 3}}, {{f, {3, 4}}}, {"reshape", "[3, 4]", "[5, 3]"});
  expect_infer_error(OpKind::Pad, pads(PadMode::Reflect, {0, 4}, {0, 0}), {{f, {3, 4}}},
                     {"pad", "reflect", "dimension 1", "[3, 4]"});
  expect_infer_error(OpKind::Pad, pads(PadMode::Zeros, {0, -1}, {0, 0}), {{f, {3, 4}}}, {"pad", "negative"});
  expect_infer_error(OpKind::Pad, pads(PadMode::Zeros, {0, 0, 1}, {0, 0, 0}), {{f, {3, 4}}},
                     {"pad", "dimension 2", "[3, 4]"});
  expect_infer_error(OpKind::Permute, perm({0}), {{DType::Q8_0, {32}}}, {"permute", "quantized"});
}

}  // namespace
}  // namespace ltx::test
