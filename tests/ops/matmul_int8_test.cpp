// The int8-activation path (backend/cpu/matmul/matmul_int8_avx512.cpp) against its definition: the activations
// quantized per block of 32 (d = amax / 127, q = nearest-even of x·(1/d) in f32), multiplied in double with the
// weights as dequantize_row decodes them. The kernel's only other rounding is f32: the block scale s·d, its product
// with the exact integer block sum, the offset term and the running f32 sum over K/32 blocks, so each output is
// within (K/32 + 8)·2^-24·S of the definition, S = Σ |q·d|·|w|. Shapes cross every blocking edge of the path (6-row
// tiles, 96-row A blocks, 32-column strips, 512-column blocks, 1024-deep slices with a partial last one; the 1-4 row
// path's 256-column chunks).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "core/cpu_features.h"
#include "core/int8_activations.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "ops/op_test_util.h"

namespace ltx::test {
namespace {

class Int8On {  // the option on for one test
 public:
  Int8On() { set_int8_activations(true); }
  ~Int8On() { set_int8_activations(false); }
  Int8On(const Int8On&) = delete;
  Int8On& operator=(const Int8On&) = delete;
};

bool have_vnni() { return cpu::gemm::avx512_available() && cpu_features().avx512_vnni; }

// Row-major a [m, k] as the kernel sees it: each block of 32 replaced by q·d.
std::vector<double> quantized_activations(const std::vector<float>& a, int64_t m, int64_t k) {
  std::vector<double> out(a.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t b = 0; b < k; b += 32) {
      const float* x = a.data() + i * k + b;
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
      const float d = amax / 127.0f;
      const float inv = d > 0.0f ? 1.0f / d : 0.0f;
      for (int j = 0; j < 32; ++j)
        out[static_cast<size_t>(i * k + b + j)] = std::nearbyint(x[j] * inv) * static_cast<double>(d);
    }
  return out;
}

Tensor run_int8(const Tensor& a, const Tensor& w) {
  Tensor out = Tensor::empty(a.dtype(), {a.dim(0), w.dim(0)});
  std::vector<Tensor> inputs{a, w};
  cpu::gemm::Path path{};
  EXPECT_TRUE(cpu::gemm::path_for({false, true}, inputs, out, path));
  EXPECT_EQ(path, cpu::gemm::Path::Int8);
  EXPECT_TRUE(cpu::opt::try_matmul({false, true}, inputs, out));
  return out;
}

void check(DType adt, DType wdt, int64_t m, int64_t n, int64_t k, uint32_t seed) {
  const std::string what = std::string(dtype_name(adt)) + "·" + std::string(dtype_name(wdt)) +
                           " M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
  const Tensor a = random_tensor(adt, Shape{m, k}, seed);
  const Tensor w = random_tensor(wdt, Shape{n, k}, seed + 1);
  const Tensor out = run_int8(a, w);
  const std::vector<double> aq = quantized_activations(a.to_floats(), m, k);
  const std::vector<float> wf = w.to_floats(), got = out.to_floats();
  const double ulp = adt == DType::BF16 ? 1.0 / 128 : 0.0;  // a bf16 output is rounded once more
  size_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, size = 0;
      for (int64_t e = 0; e < k; ++e) {
        exact += aq[static_cast<size_t>(i * k + e)] * wf[static_cast<size_t>(j * k + e)];
        size += std::fabs(aq[static_cast<size_t>(i * k + e)] * wf[static_cast<size_t>(j * k + e)]);
      }
      const double limit = (static_cast<double>(k) / 32 + 8) * 0x1p-24 * size + ulp * std::fabs(exact) + 1e-30;
      const double v = got[static_cast<size_t>(i * n + j)];
      if (!(std::fabs(v - exact) <= limit) && bad++ < 3)
        ADD_FAILURE() << what << ": out[" << i << ", " << j << "] = " << v << ", defined " << exact << " (limit "
                      << limit << ")";
    }
  EXPECT_EQ(bad, 0u) << what;
}

TEST(MatMulInt8, EqualsItsDefinitionForEveryFormat) {
  if (!have_vnni()) GTEST_SKIP() << "this CPU lacks AVX512_VNNI: the int8 path is not used";
  const Int8On on;
  struct Dims {
    int64_t m, n, k;
  };
  // 1-4 rows: the column-by-column path; more: the blocked one.
  const Dims dims[] = {{1, 1, 256}, {3, 300, 768}, {4, 40, 1280}, {7, 33, 512}, {13, 65, 1280}, {100, 530, 256}};
  uint32_t seed = 7;
  for (DType w : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K})
    for (DType a : {DType::F32, DType::BF16})
      for (const Dims& d : dims) check(a, w, d.m, d.n, d.k, seed += 2);
  for (DType w : {DType::Q8_0, DType::Q4_0, DType::Q5_0})  // Gemma 3 270M's width: pairs of blocks, not 256s
    check(DType::BF16, w, 2, 70, 640, seed += 2);
  for (const Dims& d : {Dims{1, 1, 256}, Dims{3, 300, 768}, Dims{4, 40, 1280}})  // Q6_K: 1-4 rows only
    for (DType a : {DType::F32, DType::BF16}) check(a, DType::Q6_K, d.m, d.n, d.k, seed += 2);
}

TEST(MatMulInt8, OffByDefaultAndForOtherFormats) {
  const Tensor a = random_tensor(DType::BF16, Shape{5, 256}, 1);  // 5 rows: Q6_K is for 1-4
  for (DType wdt : {DType::Q8_0, DType::Q6_K, DType::BF16}) {
    const Tensor w = random_tensor(wdt, Shape{8, 256}, 2);
    Tensor out = Tensor::empty(DType::BF16, {5, 8});
    std::vector<Tensor> inputs{a, w};
    cpu::gemm::Path path{};
    ASSERT_TRUE(cpu::gemm::path_for({false, true}, inputs, out, path));
    EXPECT_NE(path, cpu::gemm::Path::Int8) << dtype_name(wdt) << " with the option off";
    const Int8On on;
    ASSERT_TRUE(cpu::gemm::path_for({false, true}, inputs, out, path));
    EXPECT_EQ(path == cpu::gemm::Path::Int8, wdt == DType::Q8_0 && have_vnni()) << dtype_name(wdt);
  }
}

TEST(MatMulInt8, SameBitsOnOneAndTwoThreads) {
  if (!have_vnni()) GTEST_SKIP() << "this CPU lacks AVX512_VNNI: the int8 path is not used";
  const Int8On on;
  const Tensor a = random_tensor(DType::BF16, Shape{150, 1280}, 3);
  const Tensor w = random_tensor(DType::Q4_K, Shape{600, 1280}, 4);
  const int threads = thread_count();
  set_thread_count(1);
  const std::vector<float> one = run_int8(a, w).to_floats();
  set_thread_count(2);
  const std::vector<float> two = run_int8(a, w).to_floats();
  set_thread_count(threads);
  EXPECT_EQ(one, two);
}

TEST(MatMulInt8, NonFiniteActivationsReachTheOutput) {
  if (!have_vnni()) GTEST_SKIP() << "this CPU lacks AVX512_VNNI: the int8 path is not used";
  const Int8On on;
  std::vector<float> av = random_tensor(DType::F32, Shape{3, 64}, 5).to_floats();
  av[40] = std::numeric_limits<float>::quiet_NaN();     // row 0, block 1
  av[64 + 3] = std::numeric_limits<float>::infinity();  // row 1, block 0
  const Tensor a = Tensor::from_floats(DType::F32, {3, 64}, av);
  const Tensor w = random_tensor(DType::Q8_0, Shape{5, 64}, 6);
  const std::vector<float> out = run_int8(a, w).to_floats();
  for (int j = 0; j < 5; ++j) {
    EXPECT_TRUE(std::isnan(out[static_cast<size_t>(j)])) << "row 0 (NaN), column " << j;
    EXPECT_TRUE(std::isnan(out[static_cast<size_t>(5 + j)])) << "row 1 (Inf), column " << j;
    EXPECT_TRUE(std::isfinite(out[static_cast<size_t>(10 + j)])) << "row 2 (finite), column " << j;
  }
}

}  // namespace
}  // namespace ltx::test
