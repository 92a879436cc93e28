// torch's CPU rounding rules (core/torch_cpu_math.h). Expected values were printed by torch 2.15
// (torch.linspace(0, 1, 10) under ATEN_CPU_CAPABILITY=avx512 and =default); every grid size is pinned by
// tests/golden/rope.
#include "core/torch_cpu_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"

namespace ltx {
namespace {

TEST(TorchCpuMath, LinspaceSecondHalfIsFusedOnlyInVectorBuilds) {
  // Element 6 of 10 counts down from the end: 1 - step·3, fused on AVX2/AVX-512, rounded twice by default.
  EXPECT_EQ(torch_linspace(0.0f, 1.0f, 10, TorchCpuKernels::Avx512)[6], 0x1.555556p-1f);
  EXPECT_EQ(torch_linspace(0.0f, 1.0f, 10, TorchCpuKernels::Avx2)[6], 0x1.555556p-1f);
  EXPECT_EQ(torch_linspace(0.0f, 1.0f, 10, TorchCpuKernels::Default)[6], 0x1.555554p-1f);
  // The first half counts up from the start, identical in every build when start is 0.
  EXPECT_EQ(torch_linspace(0.0f, 1.0f, 10, TorchCpuKernels::Default)[3], 0x1.555556p-2f);
  EXPECT_EQ(torch_linspace(0.0f, 1.0f, 10, TorchCpuKernels::Avx512)[9], 1.0f);
  EXPECT_EQ(torch_linspace(2.0f, 5.0f, 1, TorchCpuKernels::Avx512), std::vector<float>{2.0f});
  EXPECT_TRUE(torch_linspace(0.0f, 1.0f, 0, TorchCpuKernels::Avx512).empty());
}

TEST(TorchCpuMath, PowUsesTheCLibraryOutsideTheVectorLoop) {
  // 10000 ** linspace(0, 1, 34): torch's AVX-512 result differs from powf at element 8 (SLEEF), the default build's
  // nowhere, and elements 32 and 33 (past the last full pass of two 16-lane vectors) are powf's in every build.
  const std::vector<float> e = torch_linspace(0.0f, 1.0f, 34, TorchCpuKernels::Avx512);
  const std::vector<float> fallback = torch_pow(10000.0f, e, TorchCpuKernels::Default);
  for (size_t i = 0; i < e.size(); ++i) EXPECT_EQ(fallback[i], std::pow(10000.0f, e[i])) << i;
  if (!cpu_features().fma) GTEST_SKIP() << "this CPU has no FMA: torch's AVX2/AVX-512 results are not reproduced";
  const std::vector<float> avx512 = torch_pow(10000.0f, e, TorchCpuKernels::Avx512);
  const std::vector<float> avx2 = torch_pow(10000.0f, e, TorchCpuKernels::Avx2);  // 32 vectorized in 8-lane pairs
  EXPECT_NE(avx512[8], fallback[8]);
  for (size_t i = 0; i < e.size(); ++i) {
    if (i != 8) {
      EXPECT_EQ(avx512[i], fallback[i]) << i;
    }
    EXPECT_NEAR(avx512[i], fallback[i], std::abs(fallback[i]) * 2.5e-7f) << i;  // within SLEEF's 1 ulp
  }
  EXPECT_EQ(avx512, avx2);  // SLEEF's 8- and 16-lane powf agree
}

TEST(TorchCpuMath, OverrideAndNames) {
  EXPECT_EQ(parse_torch_cpu_kernels("AVX512"), TorchCpuKernels::Avx512);
  EXPECT_EQ(parse_torch_cpu_kernels("default"), TorchCpuKernels::Default);
  EXPECT_EQ(parse_torch_cpu_kernels("avx2"), TorchCpuKernels::Avx2);
  EXPECT_FALSE(parse_torch_cpu_kernels("sse4").has_value());
  const TorchCpuKernels detected = torch_cpu_kernels();
  set_torch_cpu_kernels(TorchCpuKernels::Default);
  EXPECT_EQ(torch_cpu_kernels(), TorchCpuKernels::Default);
  set_torch_cpu_kernels(std::nullopt);
  EXPECT_EQ(torch_cpu_kernels(), detected);
}

}  // namespace
}  // namespace ltx
