// opt::try_conv1d_bf16 (conv1d_avx512.cpp, the vocoders' convs in production precision) against the reference
// conv on the input rounded to bf16 first (what the kernel, like oneDNN's f32×bf16 path, feeds its products): the
// products are then identical and exact in f32, only the order of the f32 sums differs (<= C·K = 330 terms of
// |x·w| <= 4), so 2e-5 + 1e-5·|ref|; a bf16 output adds one possible rounding flip (2^-8·|ref|).
// Cases: dilation, stride, every pad mode the kernel takes, no bias, batches, bf16 input and output, odd channel
// counts, and chunked output positions (a small column budget); each through the GEMM path and the direct path.
#include "backend/cpu/conv/conv1d_opt.h"

#include "backend/cpu/matmul/matmul_gemm.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Conv);

struct Case {
  const char* name;
  Shape x, w;
  ConvAttrs attrs;
  bool bias;
  DType in, out;
  int64_t max_col_bytes;
};

constexpr auto Z = PadMode::Zeros, R = PadMode::Reflect, P = PadMode::Replicate;
constexpr int64_t kWhole = int64_t{32} << 20;

std::vector<Case> cases() {
  const DType f = DType::F32, b = DType::BF16;
  return {
      {"odd channels", {1, 7, 130}, {5, 7, 3}, conv_attrs(1, {1}, {2}, {2}, {2}, {Z}, 1), true, f, f, kWhole},
      {"resblock k11 d5", {1, 30, 97}, {30, 30, 11}, conv_attrs(1, {1}, {5}, {25}, {25}, {Z}, 1), true, f, f, kWhole},
      {"k7 d3 batch 2", {2, 12, 64}, {9, 12, 7}, conv_attrs(1, {1}, {3}, {9}, {9}, {Z}, 1), true, f, f, kWhole},
      {"no bias, post conv", {1, 16, 50}, {2, 16, 7}, conv_attrs(1, {1}, {1}, {3}, {3}, {Z}, 1), false, f, f, kWhole},
      {"replicate", {1, 8, 40}, {5, 8, 5}, conv_attrs(1, {1}, {1}, {4}, {2}, {P}, 1), true, f, f, kWhole},
      {"reflect stride 2", {1, 8, 41}, {6, 8, 5}, conv_attrs(1, {2}, {2}, {3}, {3}, {R}, 1), true, f, f, kWhole},
      {"bf16 in and out", {2, 20, 33}, {7, 20, 3}, conv_attrs(1, {1}, {1}, {1}, {1}, {Z}, 1), true, b, b, kWhole},
      {"chunked columns",
       {1, 10, 700},
       {12, 10, 11},
       conv_attrs(1, {1}, {3}, {15}, {15}, {Z}, 1),
       true,
       f,
       f,
       10 * 11 * 2 * 128},
  };
}

TEST(Conv1dBf16, MatchesReferenceOnBf16RoundedInput) {
  uint32_t seed = 1;
  for (const Case& c : cases()) {
    std::vector<Tensor> in = {random_tensor(c.in, c.x, seed++, -2.0f, 2.0f), random_tensor(DType::BF16, c.w, seed++)};
    if (c.bias) in.push_back(random_tensor(DType::F32, {c.w[0]}, seed++));
    std::vector<Tensor> rounded = in;
    rounded[0] = in[0].to(DType::BF16).to(DType::F32);
    const Tensor expected = run_reference(OpKind::Conv, c.attrs, rounded);
    Tensor out = Tensor::empty(c.out, expected.shape());
    if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "this CPU lacks AVX-512 with BF16; the kernel declines";
    for (const int64_t direct_max : {int64_t{0}, int64_t{1024}}) {  // the GEMM path, then the direct one
      out = Tensor::empty(c.out, expected.shape());
      ASSERT_TRUE(cpu::opt::try_conv1d_bf16(OpKind::Conv, c.attrs, in, out, {direct_max, c.max_col_bytes})) << c.name;
      const std::string what = std::string(c.name) + (direct_max > 0 && c.attrs.stride[0] == 1 ? " direct" : " gemm");
      expect_close(out, expected, 2e-5f, c.out == DType::BF16 ? 8e-3f : 1e-5f, what.c_str());
    }
  }
}

TEST(Conv1dBf16, DeclinesWhatItDoesNotHandle) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "this CPU lacks AVX-512 with BF16";
  const Tensor x = random_tensor(DType::F32, {1, 4, 20}, 1);
  const ConvAttrs plain = conv_attrs(1, {1}, {1}, {1}, {1}, {Z}, 1);
  Tensor out = Tensor::empty(DType::F32, {1, 4, 20});
  // f32 weights (validation precision) stay on the other kernels, as do groups and 2-D convs.
  const auto declines = [&](OpKind kind, const ConvAttrs& a, const Tensor& w) {
    const std::vector<Tensor> in = {x, w};
    return !cpu::opt::try_conv1d_bf16(kind, a, in, out);
  };
  EXPECT_TRUE(declines(OpKind::Conv, plain, random_tensor(DType::F32, {4, 4, 3}, 2)));
  const ConvAttrs grouped = conv_attrs(1, {1}, {1}, {1}, {1}, {Z}, 2);
  EXPECT_TRUE(declines(OpKind::Conv, grouped, random_tensor(DType::BF16, {4, 2, 3}, 3)));
  EXPECT_TRUE(declines(OpKind::ConvTranspose1d, plain, random_tensor(DType::BF16, {4, 4, 3}, 4)));
}

}  // namespace
}  // namespace ltx::test
