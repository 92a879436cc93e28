// TorchGenerator properties that hold whatever the goldens say: the engine is the standard MT19937, seeding
// resets everything, and the entry points agree with each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.h"
#include "pipeline/noise.h"

namespace ltx {
namespace {

TEST(NoiseGenerator, EngineIsStandardMt19937OnTheSeedLowWord) {
  for (uint64_t seed : {0ull, 42ull, 5489ull, (1ull << 32) + 5, ~0ull}) {
    Mt19937 ours(seed);
    std::mt19937 standard(static_cast<uint32_t>(seed));
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(ours.next(), standard()) << "seed " << seed << " draw " << i;
  }
}

TEST(NoiseGenerator, Random64TakesTheHighWordFirst) {
  TorchGenerator a(7), b(7);
  const uint64_t hi = a.random(), lo = a.random();
  EXPECT_EQ(b.random64(), (hi << 32) | lo);
}

TEST(NoiseGenerator, ManualSeedForgetsTheCachedNormal) {
  TorchGenerator a(3);
  const Tensor first = a.randn({1});  // leaves the pair's sin half cached
  a.manual_seed(3);
  const Tensor again = a.randn({1});
  EXPECT_EQ(first.data<uint32_t>()[0], again.data<uint32_t>()[0]);
  EXPECT_EQ(a.initial_seed(), 3u);
}

bool same_float(float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0; }

TEST(NoiseGenerator, FillAndRandnAgreeForEveryDtype) {
  for (int64_t n : {0, 1, 15, 16, 17, 40}) {
    for (RandnMath math : {RandnMath::Avx2, RandnMath::Scalar}) {
      TorchGenerator a(11, math), b(11, math);
      std::vector<float> f(static_cast<size_t>(n));
      std::vector<uint16_t> h(static_cast<size_t>(n)), g(static_cast<size_t>(n));
      a.fill_randn(f.data(), n);
      a.fill_randn_bf16(h.data(), n);
      a.fill_randn_f16(g.data(), n);
      const Tensor tf = b.randn({n}, DType::F32), th = b.randn({n}, DType::BF16), tg = b.randn({n}, DType::F16);
      EXPECT_TRUE(std::equal(f.begin(), f.end(), tf.data<float>(), same_float)) << n;
      EXPECT_TRUE(std::equal(h.begin(), h.end(), th.data<uint16_t>())) << n;
      EXPECT_TRUE(std::equal(g.begin(), g.end(), tg.data<uint16_t>())) << n;
      // Both generators drew the same amount, zero-element draws included.
      EXPECT_EQ(a.random(), b.random()) << n;
    }
  }
}

TEST(NoiseGenerator, CopyForksTheStream) {
  TorchGenerator a(5);
  a.randn({3});  // a cached normal is part of the state a copy must carry
  TorchGenerator b = a;
  const Tensor x = a.randn({33}), y = b.randn({33});
  EXPECT_EQ(std::memcmp(x.raw(), y.raw(), x.nbytes()), 0);
  const Tensor p = a.randn({1}), q = b.randn({1});
  EXPECT_EQ(p.data<uint32_t>()[0], q.data<uint32_t>()[0]);
}

TEST(NoiseGenerator, ValuesAreStandardNormal) {
  // A loose sanity check of both maths variants on a large draw (exactness is the goldens' job).
  for (RandnMath math : {RandnMath::Avx2, RandnMath::Scalar}) {
    TorchGenerator gen(123, math);
    const Tensor t = gen.randn({1 << 18});
    double sum = 0, sum_sq = 0;
    for (float v : t.to_floats()) {
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
    const double n = static_cast<double>(t.numel());
    EXPECT_NEAR(sum / n, 0.0, 0.01);
    EXPECT_NEAR(sum_sq / n, 1.0, 0.01);
  }
}

TEST(NoiseGenerator, RejectsOtherDtypes) {
  TorchGenerator gen(0);
  try {
    gen.randn({4}, DType::I32);
    FAIL() << "randn accepted i32";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[noise]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("i32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gen.fill_randn(nullptr, -1), Error);
}

TEST(NoiseGenerator, DefaultMathsIsAvx2OnX86) {
#if defined(__x86_64__)
  EXPECT_EQ(default_randn_math(), RandnMath::Avx2);
#else
  EXPECT_EQ(default_randn_math(), RandnMath::Scalar);
#endif
  EXPECT_EQ(TorchGenerator(1).math(), default_randn_math());
}

}  // namespace
}  // namespace ltx
