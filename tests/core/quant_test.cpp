// Block quantization: bit-exact dequantization against gguf-py goldens, gguf-py-identical Q8_0/Q4_0
// quantization, round-trip error bounds, bad sizes, and quantized tensors (rows, slices).
// Goldens: tests/data/quant/, made by tools/reference/make_quant_goldens.py.
#include "core/quant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "core/tensor.h"

namespace ltx {
namespace {

std::vector<uint8_t> read_file(const std::string& name) {
  const std::string path = std::string(LTX_SOURCE_DIR) + "/tests/data/quant/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing golden " << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> read_f32(const std::string& name) {
  const std::vector<uint8_t> bytes = read_file(name);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);  // little-endian host, as the files
  return v;
}

std::vector<float> random_normal(size_t n, uint32_t seed, bool varied_magnitude) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  // Magnitudes 10^-1.5 .. 10^3 keep every block's f16 scale a normal number, where the bounds below hold.
  std::uniform_real_distribution<float> exponent(-1.5f, 3.0f);
  std::vector<float> v(n);
  float scale = 1.0f;
  for (size_t i = 0; i < n; ++i) {
    if (varied_magnitude && i % 32 == 0) scale = std::pow(10.0f, exponent(rng));
    v[i] = normal(rng) * scale;
  }
  return v;
}

std::vector<float> round_trip(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(dtype_bytes_for(t, static_cast<int64_t>(x.size())));
  quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(t, q.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

// ---- dequantization matches gguf-py bit for bit ---------------------------------------------------------

class DequantGolden : public ::testing::TestWithParam<DType> {};

TEST_P(DequantGolden, BitExactWithGgufPy) {
  const DType t = GetParam();
  const std::string name(dtype_name(t));
  const std::vector<uint8_t> blocks = read_file("dequant_" + name + ".blocks");
  const std::vector<float> expected = read_f32("dequant_" + name + ".f32");
  ASSERT_FALSE(expected.empty());
  const auto n = static_cast<int64_t>(expected.size());
  ASSERT_EQ(blocks.size(), dtype_bytes_for(t, n));

  std::vector<float> got(expected.size(), std::nanf(""));
  dequantize_row(t, blocks.data(), got.data(), n);
  int mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(expected[i]) && ++mismatches <= 5)
      ADD_FAILURE() << name << " element " << i << " (block " << i / dtype_block_elems(t) << "): got " << got[i]
                    << ", gguf-py " << expected[i];
  }
  EXPECT_EQ(mismatches, 0);

  // A single block in the middle decodes the same on its own (no state carried between blocks).
  const size_t be = dtype_block_elems(t), bb = dtype_block_bytes(t);
  std::vector<float> one(be);
  dequantize_row(t, blocks.data() + 3 * bb, one.data(), static_cast<int64_t>(be));
  EXPECT_EQ(std::memcmp(one.data(), expected.data() + 3 * be, be * 4), 0);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DequantGolden,
                         ::testing::Values(DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                                           DType::Q5_0),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// ---- Q8_0 / Q4_0 quantization matches gguf-py's bytes -------------------------------------------------

class QuantizeGolden : public ::testing::TestWithParam<DType> {};

TEST_P(QuantizeGolden, BytesEqualGgufPy) {
  const DType t = GetParam();
  const std::string name(dtype_name(t));
  const std::vector<float> x = read_f32("quantize_" + name + ".f32");
  const std::vector<uint8_t> expected = read_file("quantize_" + name + ".blocks");
  ASSERT_FALSE(x.empty());
  ASSERT_EQ(expected.size(), dtype_bytes_for(t, static_cast<int64_t>(x.size())));

  std::vector<uint8_t> got(expected.size(), 0xAB);
  quantize_row(t, x.data(), got.data(), static_cast<int64_t>(x.size()));
  const size_t bb = dtype_block_bytes(t);
  for (size_t b = 0; b < expected.size() / bb; ++b)
    EXPECT_EQ(std::memcmp(got.data() + b * bb, expected.data() + b * bb, bb), 0) << name << " block " << b;
}

INSTANTIATE_TEST_SUITE_P(GgufPyQuantizers, QuantizeGolden, ::testing::Values(DType::Q8_0, DType::Q4_0, DType::Q5_0),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// ---- round-trip error bounds ----------------------------------------------------------------------------

// Largest |x| over each group of `len` elements, repeated for every element of the group.
std::vector<float> group_amax(const std::vector<float>& x, size_t len) {
  std::vector<float> a(x.size());
  for (size_t g = 0; g < x.size(); g += len) {
    float m = 0.0f;
    for (size_t i = g; i < g + len; ++i) m = std::max(m, std::fabs(x[i]));
    std::fill(a.begin() + static_cast<int64_t>(g), a.begin() + static_cast<int64_t>(g + len), m);
  }
  return a;
}

std::vector<float> group_range(const std::vector<float>& x, size_t len) {
  std::vector<float> r(x.size());
  for (size_t g = 0; g < x.size(); g += len) {
    const auto [lo, hi] =
        std::minmax_element(x.begin() + static_cast<int64_t>(g), x.begin() + static_cast<int64_t>(g + len));
    std::fill(r.begin() + static_cast<int64_t>(g), r.begin() + static_cast<int64_t>(g + len),
              std::max(*hi, 0.0f) - std::min(*lo, 0.0f));
  }
  return r;
}

// Checks |y - x| <= factor * step per element, where step is the format's quantization step there.
void expect_within_steps(const char* what, const std::vector<float>& x, const std::vector<float>& y,
                         const std::vector<float>& step, float factor) {
  float worst = 0.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << what << " element " << i;
    if (step[i] > 0.0f)
      worst = std::max(worst, std::fabs(y[i] - x[i]) / step[i]);
    else
      ASSERT_EQ(y[i], 0.0f) << what << " element " << i;
  }
  EXPECT_LE(worst, factor) << what << ": worst error in quantization steps";
}

TEST(QuantRoundTrip, Q8_0WithinHalfStep) {
  const std::vector<float> x = random_normal(32 * 64, 1, true);
  std::vector<float> step = group_amax(x, 32);
  for (float& s : step) s /= 127.0f;
  // Half a step from rounding, plus |q| <= 127 times f16's relative rounding of d (2^-11).
  expect_within_steps("q8_0", x, round_trip(DType::Q8_0, x), step, 0.5f + 127.0f / 2048.0f);
}

TEST(QuantRoundTrip, Q4_0WithinOneStep) {
  const std::vector<float> x = random_normal(32 * 64, 2, true);
  std::vector<float> step = group_amax(x, 32);
  for (float& s : step) s /= 8.0f;
  // Rounding gives half a step, but the largest value of the sign opposite to the block's extreme maps to
  // +8, which clamps to 7: a full step. Plus 8 * f16's 2^-11 for d.
  expect_within_steps("q4_0", x, round_trip(DType::Q4_0, x), step, 1.0f + 8.0f / 2048.0f);
}

// K formats: the simple quantizer's step is set per sub-block, but its 6-bit (or 8-bit) scale is a
// multiple of the super-block's d, which can round it by up to d / 2; the bounds allow that.
TEST(QuantRoundTrip, Q4_KAndQ5_KWithinStepBounds) {
  const std::vector<float> x = random_normal(256 * 16, 3, false);
  for (const auto& [t, qmax] : {std::pair{DType::Q4_K, 15.0f}, std::pair{DType::Q5_K, 31.0f}}) {
    std::vector<float> step = group_range(x, 32);
    for (float& s : step) s /= qmax;
    expect_within_steps(std::string(dtype_name(t)).c_str(), x, round_trip(t, x), step, 0.75f);
  }
}

TEST(QuantRoundTrip, Q6_KWithinStepBound) {
  const std::vector<float> x = random_normal(256 * 16, 4, false);
  std::vector<float> step = group_amax(x, 16);
  for (float& s : step) s /= 31.0f;
  expect_within_steps("q6_k", x, round_trip(DType::Q6_K, x), step, 0.75f);
}

TEST(QuantRoundTrip, KTypesKeepSubBlockMagnitudes) {
  // Sub-blocks at very different magnitudes inside one super-block: the small ones must not be crushed
  // to zero nor take the large ones' values (a layout mix-up of scales would do either).
  std::vector<float> x = random_normal(256, 5, false);
  for (size_t i = 0; i < x.size(); ++i) x[i] *= (i / 32) % 2 == 0 ? 1.0f : 0.05f;
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const std::vector<float> y = round_trip(t, x);
    for (size_t j = 0; j < 8; ++j) {
      float ax = 0.0f, ay = 0.0f;
      for (size_t i = 32 * j; i < 32 * j + 32; ++i) {
        ax = std::max(ax, std::fabs(x[i]));
        ay = std::max(ay, std::fabs(y[i]));
      }
      EXPECT_NEAR(ay, ax, 0.25f * ax) << dtype_name(t) << " sub-block " << j;
    }
  }
}

TEST(QuantRoundTrip, ZerosStayZero) {
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q5_0}) {
    const std::vector<float> x(256, 0.0f);
    for (float v : round_trip(t, x)) ASSERT_EQ(v, 0.0f) << dtype_name(t);
  }
}

TEST(QuantRoundTrip, PlainTypesConvert) {
  const std::vector<float> x = {1.0f, -2.5f, 0.1f, 65504.0f, 1e-8f, 3.14159f};
  std::vector<float> y = round_trip(DType::F32, x);
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * 4), 0);
  y = round_trip(DType::F16, x);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], f16_to_f32(f32_to_f16(x[i]))) << i;
  y = round_trip(DType::BF16, x);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], bf16_to_f32(f32_to_bf16(x[i]))) << i;
  EXPECT_NE(round_trip(DType::F16, x)[2], 0.1f);  // really went through 16 bits
}

// ---- bad input ------------------------------------------------------------------------------------------

TEST(QuantErrors, PartialBlocksAndNegativeCountsThrow) {
  std::vector<uint8_t> buf(1024);
  std::vector<float> f(512);
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q5_0}) {
    const auto be = static_cast<int64_t>(dtype_block_elems(t));
    for (int64_t n : {be - 1, be + 1, int64_t{-static_cast<int64_t>(be)}}) {
      EXPECT_THROW(dequantize_row(t, buf.data(), f.data(), n), Error) << dtype_name(t) << " n=" << n;
      EXPECT_THROW(quantize_row(t, f.data(), buf.data(), n), Error) << dtype_name(t) << " n=" << n;
    }
  }
  try {
    dequantize_row(DType::Q4_K, buf.data(), f.data(), 100);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.component(), "quant");
    EXPECT_NE(std::string(e.what()).find("q4_k"), std::string::npos) << e.what();
  }
}

TEST(QuantErrors, NonFiniteAndOverflowingValuesThrow) {
  std::vector<uint8_t> buf(dtype_bytes_for(DType::Q8_0, 256));  // the largest of these at 256 elements
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q5_0}) {
    for (float bad : {std::nanf(""), INFINITY, 1e30f}) {  // 1e30: the block's f16 scale would be inf
      std::vector<float> x(256, 0.5f);
      x[40] = bad;
      EXPECT_THROW(quantize_row(t, x.data(), buf.data(), 256), Error) << dtype_name(t) << " " << bad;
    }
    std::vector<float> ok(256, 1000.0f);  // large but representable
    EXPECT_NO_THROW(quantize_row(t, ok.data(), buf.data(), 256)) << dtype_name(t);
  }
}

TEST(QuantErrors, IntegerTypesAreRejected) {
  std::vector<uint8_t> buf(64);
  std::vector<float> f(8);
  EXPECT_THROW(dequantize_row(DType::I32, buf.data(), f.data(), 8), Error);
  EXPECT_THROW(quantize_row(DType::U8, f.data(), buf.data(), 8), Error);
}

// ---- quantized tensors ----------------------------------------------------------------------------------

TEST(QuantTensor, FromFloatsToFloatsRoundTrips) {
  const std::vector<float> x = random_normal(4 * 64, 6, true);
  const Tensor t = Tensor::from_floats(DType::Q8_0, Shape{4, 64}, x);
  ASSERT_EQ(t.dtype(), DType::Q8_0);
  ASSERT_EQ(t.nbytes(), size_t{4 * 2 * 34});
  const std::vector<float> y = t.to_floats();
  const std::vector<float> expected = round_trip(DType::Q8_0, x);
  ASSERT_EQ(y.size(), x.size());
  EXPECT_EQ(std::memcmp(y.data(), expected.data(), y.size() * 4), 0);
  std::vector<float> step = group_amax(x, 32);
  for (float& s : step) s /= 127.0f;
  expect_within_steps("tensor q8_0", x, y, step, 0.5f + 127.0f / 2048.0f);
}

TEST(QuantTensor, RowSlicesDequantizeTheirRows) {
  for (DType t : {DType::Q8_0, DType::Q4_K}) {
    const int64_t cols = 256, rows = 5;
    std::vector<float> x = random_normal(static_cast<size_t>(rows * cols), 7, false);
    for (int64_t r = 0; r < rows; ++r)  // rows at distinct magnitudes so a wrong row is obvious
      for (int64_t c = 0; c < cols; ++c) x[static_cast<size_t>(r * cols + c)] += 10.0f * static_cast<float>(r);
    const Tensor full = Tensor::from_floats(t, Shape{rows, cols}, x);
    const std::vector<float> all = full.to_floats();

    const std::vector<float> mid = full.slice(0, 1, 3).to_floats();
    ASSERT_EQ(mid.size(), size_t{2 * cols});
    EXPECT_EQ(std::memcmp(mid.data(), all.data() + cols, mid.size() * 4), 0) << dtype_name(t);

    const std::vector<float> strided = full.slice(0, 0, 5, 2).to_floats();  // rows 0, 2, 4
    ASSERT_EQ(strided.size(), size_t{3 * cols});
    for (int64_t k = 0; k < 3; ++k)
      EXPECT_EQ(std::memcmp(strided.data() + k * cols, all.data() + 2 * k * cols, cols * 4), 0)
          << dtype_name(t) << " slice row " << k;
  }
}

}  // namespace
}  // namespace ltx

namespace ltx {
namespace {

// Q5_0 uses all 32 levels: a ramp from -max to +max decodes within half a step of its input.
TEST(QuantRoundTrip, Q5_0WithinHalfAStep) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -1.0f + 2.0f * static_cast<float>(i) / 63.0f;
  std::vector<uint8_t> blocks(2 * dtype_block_bytes(DType::Q5_0));
  std::vector<float> y(64);
  quantize_row(DType::Q5_0, x.data(), blocks.data(), 64);
  dequantize_row(DType::Q5_0, blocks.data(), y.data(), 64);
  const float step = 1.0f / 16.0f;
  for (size_t i = 0; i < x.size(); ++i) EXPECT_LE(std::abs(x[i] - y[i]), 0.5f * step + 1e-3f) << i;
}

}  // namespace
}  // namespace ltx
