// Cast between every pair of plain dtypes against torch's .to() (round to nearest even into bf16/f16, with exact
// ties in the inputs; truncation into integers; exact large i64), and quantized -> float decoding.
#include <bit>
#include <cstdint>

#include "golden_a.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Cast);

constexpr DType kPlain[] = {DType::F32, DType::BF16, DType::F16, DType::I32, DType::I64, DType::U8};

bool is_int(DType t) { return t == DType::I32 || t == DType::I64 || t == DType::U8; }

// Bitwise for floats (so -0.0 and rounding direction both count), exact i64 for integers.
void expect_same(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  if (is_int(expected.dtype())) {
    EXPECT_EQ(actual.to_ints(), expected.to_ints()) << what;
    return;
  }
  const auto a = actual.to_floats(), b = expected.to_floats();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i]))
        << what << " element " << i << ": " << a[i] << " vs " << b[i];
}

const GoldenFile& golden() {
  static const GoldenFile g("cast");
  return g;
}

TEST(Cast, MatchesTorchForEveryPlainPair) {
  for (DType from : kPlain) {
    for (DType to : kPlain) {
      const std::string name = std::string(dtype_name(from)) + "_to_" + std::string(dtype_name(to));
      const Tensor in = golden().inputs(name).at(0);
      ASSERT_EQ(in.dtype(), from) << name;
      const Tensor expected = golden().output(name);
      expect_same(run_reference(OpKind::Cast, CastAttrs{to}, {in}), expected, name);
      expect_same(run_reference(OpKind::Cast, CastAttrs{to}, {non_contiguous(in)}), expected, name + " strided");
      expect_same(run_dispatched(OpKind::Cast, CastAttrs{to}, {in}), expected, name + " dispatched");
    }
  }
}

// The optimized f32 <-> bf16 path (cast_opt.cpp) over vector bodies, tails and several pool pieces, with the values
// where rounding is delicate: ties both ways, the largest finite values, denormals, -0, infinities and NaNs.
TEST(Cast, DispatchedF32Bf16EqualsTheReferenceBitForBit) {
  std::vector<float> v = random_values(3 * 65536 + 37, 5, -3.0f, 3.0f);
  const uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0xff7f8000u, 0x00000001u, 0x807fffffu,
                              0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00001u, 0xff800001u, 0x00008000u};
  for (size_t i = 0; i < v.size(); i += 997) v[i] = std::bit_cast<float>(special[(i / 997) % std::size(special)]);
  const Tensor f32 = Tensor::from_floats(DType::F32, Shape{static_cast<int64_t>(v.size())}, v);
  expect_same(run_dispatched(OpKind::Cast, CastAttrs{DType::BF16}, {f32}),
              run_reference(OpKind::Cast, CastAttrs{DType::BF16}, {f32}), "f32 -> bf16");
  const Tensor bf16 = run_reference(OpKind::Cast, CastAttrs{DType::BF16}, {f32});
  expect_same(run_dispatched(OpKind::Cast, CastAttrs{DType::F32}, {bf16}),
              run_reference(OpKind::Cast, CastAttrs{DType::F32}, {bf16}), "bf16 -> f32");
}

TEST(Cast, LargeI64) {
  for (DType to : {DType::F32, DType::BF16, DType::F16, DType::I64}) {
    const std::string name = "i64_big_to_" + std::string(dtype_name(to));
    expect_same(run_reference(OpKind::Cast, CastAttrs{to}, golden().inputs(name)), golden().output(name), name);
  }
}

TEST(Cast, QuantizedDecodesToFloat) {
  const Tensor q = random_tensor(DType::Q4_K, Shape{3, 256}, 9);
  const Tensor decoded = Tensor::from_floats(DType::F32, Shape{3, 256}, q.to_floats());  // dequantize_row
  expect_same(run_reference(OpKind::Cast, CastAttrs{DType::F32}, {q}), decoded, "q4_k -> f32");
  expect_same(run_reference(OpKind::Cast, CastAttrs{DType::BF16}, {q}), decoded.to(DType::BF16), "q4_k -> bf16");
  // Rows 0 and 2 only: a strided view of whole rows.
  const Tensor rows = q.slice(0, 0, 3, 2);
  const Tensor expected = run_reference(OpKind::Slice, SliceAttrs{0, 0, 3, 2}, {decoded});
  expect_same(run_reference(OpKind::Cast, CastAttrs{DType::F32}, {rows}), expected, "q4_k rows -> f32");
}

TEST(Cast, InferenceErrors) {
  expect_infer_error(OpKind::Cast, CastAttrs{DType::Q8_0}, {{DType::F32, {2, 32}}}, {"cast", "f32[2, 32]", "q8_0"});
  expect_infer_error(OpKind::Cast, CastAttrs{DType::I32}, {{DType::Q8_0, {2, 32}}}, {"cast", "q8_0[2, 32]", "i32"});
  expect_infer_error(OpKind::Cast, CastAttrs{DType::F32}, {{DType::F32, {2}}, {DType::F32, {2}}}, {"cast", "1 input"});
}

}  // namespace
}  // namespace ltx::test
