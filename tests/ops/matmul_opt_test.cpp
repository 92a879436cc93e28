// The optimized MatMul (opt::try_matmul, and cpu::run which dispatches to it) against the reference kernel on
// odd shapes that are multiples of no block size (MR 14, NR 32, KC 256/512, NC 512), every transpose,
// broadcast and folded batches, non-contiguous a, and f32 / bf16 / f16 / quantized weights.
//
// Tolerances come from an error bound per element, S = Σ_k |a_mk|·|b_kn| (the reference run on |a|, |b|):
//  - f32 products and sums in a different order: |Δ| <= K·2^-24·S (a loose form of the classic γ_K bound).
//  - bf16 products are exact in f32, so bf16·bf16 differs only by summation order, as above.
//  - mixed operands (f32 a with bf16 weights, bf16 a with f32 weights) are widened to f32 exactly: the f32 bound.
//  - rounding one operand to bf16 (bf16 a with quantized weights, whose dequantized values are rounded) changes
//    each term by at most bf16's unit roundoff 2^-8 of itself: |Δ| <= 2^-8·S plus the summation term.
//  - a bf16 / f16 output is rounded once by both kernels; their f32 sums may sit on either side of a rounding
//    boundary, so one output ulp (at most 2^-7 / 2^-10 of |ref|) is added.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "core/float8.h"
#include "core/tensor.h"
#include "ops/op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::MatMul);

Tensor abs_of(const Tensor& t) {
  std::vector<float> v = t.to_floats();
  for (float& x : v) x = std::fabs(x);
  return Tensor::from_floats(dtype_is_quantized(t.dtype()) ? DType::F32 : t.dtype(), t.shape(), v);
}

struct Tolerance {
  double operand_rounding = 0.0;  // 2^-8 when one operand is rounded to bf16 by the fast kernel
  double output_ulp = 0.0;        // relative ulp of the output dtype
};

Tolerance tolerance_for(DType a, DType b) {
  Tolerance t;
  if (a == DType::F16) t.output_ulp = 1.0 / 1024;
  if (a == DType::BF16) t.output_ulp = 1.0 / 128;
  if (dtype_is_quantized(b) && a == DType::BF16) t.operand_rounding = 1.0 / 256;
  return t;
}

// Runs opt::try_matmul (must handle the call), cpu::run and our own kernel alone (gemm::matmul_own, which
// try_matmul may bypass for oneDNN), and checks all three against the reference within the bound above.
void check(const MatMulAttrs& attrs, const Tensor& a, const Tensor& b, const char* what) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "this CPU lacks AVX-512 BF16; the fast kernel is not used";
  const OpAttrs op_attrs = attrs;
  const Tensor expected = run_reference(OpKind::MatMul, op_attrs, {a, b});
  const Tensor bound = run_reference(OpKind::MatMul, op_attrs, {abs_of(a), abs_of(b)});
  Tensor ours = output_for(OpKind::MatMul, op_attrs, std::vector<Tensor>{a, b});
  std::vector<Tensor> inputs{a, b};
  ASSERT_TRUE(cpu::opt::try_matmul(attrs, inputs, ours)) << what;
  const Tensor dispatched = run_dispatched(OpKind::MatMul, op_attrs, {a, b});
  Tensor own = output_for(OpKind::MatMul, op_attrs, std::vector<Tensor>{a, b});
  ASSERT_TRUE(cpu::gemm::matmul_own(attrs, inputs, own)) << what;

  const int64_t k = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  const Tolerance tol = tolerance_for(a.dtype(), b.dtype());
  const auto e = expected.to_floats(), s = bound.to_floats();
  for (const Tensor* actual : {static_cast<const Tensor*>(&ours), &dispatched, static_cast<const Tensor*>(&own)}) {
    ASSERT_EQ(actual->shape(), expected.shape()) << what;
    const auto v = actual->to_floats();
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const double limit = (static_cast<double>(k) * 0x1p-24 + tol.operand_rounding) * s[i] * 1.01 +
                           tol.output_ulp * std::fabs(e[i]) + 1e-30;
      if (!(std::fabs(static_cast<double>(v[i]) - e[i]) <= limit) && bad++ == 0) first = i;
    }
    const char* via = actual == &ours ? " (try_matmul)" : actual == &own ? " (matmul_own)" : " (cpu::run)";
    EXPECT_EQ(bad, 0u) << what << via << ": " << bad << " of " << v.size() << " differ; first at " << first << ": "
                       << v[first] << " vs " << e[first];
  }
}

struct Dims {
  int64_t m, n, k;
};
const Dims kOddDims[] = {{1, 1, 1},     {7, 33, 65},   {33, 65, 7},    {65, 257, 33},
                         {257, 7, 257}, {15, 40, 600}, {29, 550, 300}, {3, 1, 1030}};

Tensor operand(DType dt, int64_t rows, int64_t cols, bool transposed, uint32_t seed) {
  // transposed: stored [cols, rows] and used with the transpose flag, so the logical operand is [rows, cols].
  return random_tensor(dt, transposed ? Shape{cols, rows} : Shape{rows, cols}, seed);
}

void check_dtypes(DType ad, DType bd) {
  uint32_t seed = 1;
  for (const Dims& d : kOddDims) {
    for (int t = 0; t < 4; ++t) {
      const MatMulAttrs attrs{(t & 1) != 0, (t & 2) != 0};
      const Tensor a = operand(ad, d.m, d.k, attrs.transpose_a, seed++);
      const Tensor b = operand(bd, d.n, d.k, !attrs.transpose_b, seed++);  // logical [K, N]
      const std::string what = std::string(dtype_name(ad)) + "·" + std::string(dtype_name(bd)) +
                               " M=" + std::to_string(d.m) + " N=" + std::to_string(d.n) + " K=" + std::to_string(d.k) +
                               " ta=" + std::to_string(attrs.transpose_a) + " tb=" + std::to_string(attrs.transpose_b);
      check(attrs, a, b, what.c_str());
    }
  }
}

TEST(MatMulOpt, F32) { check_dtypes(DType::F32, DType::F32); }
TEST(MatMulOpt, BF16) { check_dtypes(DType::BF16, DType::BF16); }
TEST(MatMulOpt, F32ActivationsBF16Weights) { check_dtypes(DType::F32, DType::BF16); }
TEST(MatMulOpt, BF16ActivationsF32Weights) { check_dtypes(DType::BF16, DType::F32); }
TEST(MatMulOpt, F16) { check_dtypes(DType::F16, DType::F16); }

TEST(MatMulOpt, QuantizedWeights) {
  const DType quants[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};
  const Dims dims[] = {{1, 1, 256}, {7, 33, 768}, {65, 45, 256}, {20, 530, 512}};
  uint32_t seed = 100;
  for (DType q : quants)
    for (DType ad : {DType::F32, DType::BF16})
      for (const Dims& d : dims) {
        const Tensor a = random_tensor(ad, Shape{d.m, d.k}, seed++);
        const Tensor w = random_tensor(q, Shape{d.n, d.k}, seed++);  // Linear layout W [N, K]
        const std::string what = std::string(dtype_name(ad)) + "·" + std::string(dtype_name(q)) +
                                 " M=" + std::to_string(d.m) + " N=" + std::to_string(d.n) +
                                 " K=" + std::to_string(d.k);
        check({false, true}, a, w, what.c_str());
      }
}

TEST(MatMulOpt, BatchBroadcasting) {
  for (DType dt : {DType::F32, DType::BF16}) {
    // b batched and broadcast over a's leading dim; a's size-1 dim broadcast against b's.
    check({}, random_tensor(dt, Shape{2, 3, 9, 17}, 1), random_tensor(dt, Shape{3, 17, 35}, 2), "b batched");
    check({}, random_tensor(dt, Shape{2, 1, 9, 17}, 3), random_tensor(dt, Shape{1, 3, 17, 35}, 4), "both bcast");
    // A shared b folds a's batch dims into M (the Linear case), also through a size-1 dim.
    check({false, true}, random_tensor(dt, Shape{2, 1, 13, 40}, 5), random_tensor(dt, Shape{33, 40}, 6),
          "folded Linear");
    // a shared by every batch of b.
    check({true, false}, random_tensor(dt, Shape{19, 11}, 7), random_tensor(dt, Shape{4, 19, 70}, 8), "a shared");
  }
}

TEST(MatMulOpt, NonContiguousOperands) {
  for (DType dt : {DType::F32, DType::BF16}) {
    const Tensor a = non_contiguous(random_tensor(dt, Shape{3, 31, 45}, 11));  // swapped storage
    check({}, a, random_tensor(dt, Shape{45, 37}, 12), "a with swapped strides");
    const Tensor wide = random_tensor(dt, Shape{2, 31, 90}, 13);
    check({}, wide.slice(2, 1, 90, 2), random_tensor(dt, Shape{2, 45, 21}, 14), "a with k stride 2");
    const Tensor b = non_contiguous(random_tensor(dt, Shape{45, 37}, 15));
    check({}, random_tensor(dt, Shape{31, 45}, 16), b, "b with swapped strides");
    check({}, random_tensor(dt, Shape{31, 45}, 17), random_tensor(dt, Shape{45, 1}, 18).broadcast_to({45, 40}),
          "b broadcast along n (stride 0)");
  }
}

// f32 activations with bf16 weights are multiplied in f32 (kernels.h): an activation that bf16 cannot hold keeps
// its low bits. Every product and sum here is exact in f32, so any correct kernel matches the reference exactly.
TEST(MatMulOpt, F32ActivationsBF16WeightsAreExact) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  for (const Dims d : {Dims{3, 5, 7}, Dims{60, 40, 64}, Dims{200, 70, 33}}) {
    std::vector<float> av(static_cast<size_t>(d.m * d.k)), wv(static_cast<size_t>(d.n * d.k));
    for (size_t i = 0; i < av.size(); ++i) av[i] = 1.0f + static_cast<float>(i % 13) * 0x1p-12f;  // not bf16
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    const Tensor a = Tensor::from_floats(DType::F32, Shape{d.m, d.k}, av);
    const Tensor w = Tensor::from_floats(DType::BF16, Shape{d.n, d.k}, wv);
    const Tensor expected = run_reference(OpKind::MatMul, MatMulAttrs{false, true}, {a, w});
    const Tensor got = run_dispatched(OpKind::MatMul, MatMulAttrs{false, true}, {a, w});
    EXPECT_EQ(got.to_floats(), expected.to_floats()) << "M=" << d.m << " N=" << d.n << " K=" << d.k;
  }
}

cpu::gemm::Path path_of(const MatMulAttrs& attrs, const Tensor& a, const Tensor& b) {
  const Tensor out = output_for(OpKind::MatMul, attrs, std::vector<Tensor>{a, b});
  const std::vector<Tensor> in{a, b};
  cpu::gemm::Path path = cpu::gemm::Path::Blocked;
  EXPECT_TRUE(cpu::gemm::path_for(attrs, in, out, path));
  return path;
}

// The panel path (small M, W [N, K] read in place): M across the 16- and 32-column blocks, N across the 12-row
// tiles, odd K (bf16's half pair at the end of each row of W), and a stored transposed.
TEST(MatMulOpt, PanelPath) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const Dims dims[] = {{1, 1, 1},      {16, 12, 2},   {17, 13, 31}, {32, 11, 640},
                       {33, 100, 641}, {60, 25, 640}, {64, 24, 5},  {100, 37, 129}};
  uint32_t seed = 300;
  for (DType dt : {DType::F32, DType::BF16})
    for (const Dims& d : dims)
      for (bool ta : {false, true}) {
        const MatMulAttrs attrs{ta, true};
        const Tensor a = operand(dt, d.m, d.k, ta, seed++);
        const Tensor w = random_tensor(dt, Shape{d.n, d.k}, seed++);
        const std::string what = std::string(dtype_name(dt)) + " panel M=" + std::to_string(d.m) +
                                 " N=" + std::to_string(d.n) + " K=" + std::to_string(d.k) +
                                 " ta=" + std::to_string(ta);
        // 1-4 bf16 rows read in place take the matrix-vector path (Bf16GemvPathHasBlockedBits).
        const bool gemv = dt == DType::BF16 && d.m <= 4 && (!ta || d.m == 1);  // a transposed: k strided unless M = 1
        EXPECT_EQ(path_of(attrs, a, w), gemv ? cpu::gemm::Path::Gemv : cpu::gemm::Path::Panel) << what;
        check(attrs, a, w, what.c_str());
      }
}

// The matrix-vector path (1-4 f32 rows against bf16 W [N, K]) gives the blocked path's bits: each row of a is
// summed independently, so rows 0 .. m of a 5-row call (blocked: too many rows for the matrix-vector path) are
// what the m-row call must produce, byte for byte. N across the 16-output blocks, K across the KC slices (256)
// and 16-element k blocks, rows of a with a gap (a slice of a wider tensor).
TEST(MatMulOpt, GemvPathHasBlockedBits) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const Dims dims[] = {{1, 1, 1}, {2, 15, 17}, {3, 33, 256}, {4, 100, 700}, {1, 64, 4096}, {2, 50, 1000}};
  uint32_t seed = 500;
  for (const Dims& d : dims) {
    const Tensor a5 = random_tensor(DType::F32, Shape{5, d.k + 3}, seed++).slice(1, 2, d.k + 2);
    const Tensor w = random_tensor(DType::BF16, Shape{d.n, d.k}, seed++);
    const MatMulAttrs attrs{false, true};
    const std::string what =
        "gemv M=" + std::to_string(d.m) + " N=" + std::to_string(d.n) + " K=" + std::to_string(d.k);
    EXPECT_EQ(path_of(attrs, a5, w), cpu::gemm::Path::Blocked) << what;
    const Tensor a = a5.slice(0, 0, d.m);
    EXPECT_EQ(path_of(attrs, a, w), cpu::gemm::Path::Gemv) << what;
    const Tensor blocked = run_dispatched(OpKind::MatMul, attrs, {a5, w});
    const Tensor got = run_dispatched(OpKind::MatMul, attrs, {a, w});
    EXPECT_EQ(std::memcmp(got.raw(), blocked.raw(), got.nbytes()), 0) << what;
    check(attrs, a, w, what.c_str());
  }
}

// The matrix-vector path for bf16 rows (1-4) against bf16 or encoded W (a language model's decode step) gives the
// bits of the paths a 5-row call takes (panel, equal to the blocked path's): each output is summed pair by pair per KC
// slice as the blocked bf16 kernel sums it, encoded rows decoded per slice as its packer decodes them.
TEST(MatMulOpt, Bf16GemvPathHasBlockedBits) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  struct Case {
    DType dtype;
    int64_t m, n, k;
  };
  const Case cases[] = {{DType::BF16, 1, 1, 1},     {DType::BF16, 2, 15, 17},   {DType::BF16, 3, 33, 256},
                        {DType::BF16, 4, 100, 700}, {DType::BF16, 1, 64, 4096}, {DType::Q8_0, 1, 45, 800},
                        {DType::Q8_0, 3, 17, 640},  {DType::Q4_K, 2, 37, 768},  {DType::Q6_K, 1, 100, 1024},
                        {DType::Q4_0, 4, 13, 288}};
  uint32_t seed = 900;
  for (const Case& c : cases) {
    const Tensor a5 = random_tensor(DType::BF16, Shape{5, c.k + 3}, seed++).slice(1, 2, c.k + 2);
    const Tensor w = random_tensor(c.dtype, Shape{c.n, c.k}, seed++);
    const MatMulAttrs attrs{false, true};
    const std::string what = std::string(dtype_name(c.dtype)) + " gemv M=" + std::to_string(c.m) +
                             " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k);
    const Tensor a = a5.slice(0, 0, c.m);
    EXPECT_EQ(path_of(attrs, a, w), cpu::gemm::Path::Gemv) << what;
    EXPECT_NE(path_of(attrs, a5, w), cpu::gemm::Path::Gemv) << what;
    const Tensor five = run_dispatched(OpKind::MatMul, attrs, {a5, w});
    const Tensor got = run_dispatched(OpKind::MatMul, attrs, {a, w});
    const Tensor want = five.slice(0, 0, c.m).contiguous();
    EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.nbytes()), 0) << what;
    check(attrs, a, w, what.c_str());
  }
}

// W [n, k] of an encoded type from seeded values: quantize_row for the GGUF blocks, the nearest e4m3 value, or random
// finite e5m2 bytes (core has no e5m2 encoder).
Tensor encoded_weight(DType t, int64_t n, int64_t k, uint32_t seed) {
  if (t != DType::F8_E4M3 && t != DType::F8_E5M2) return random_tensor(t, Shape{n, k}, seed);
  Tensor w = Tensor::empty(t, Shape{n, k});
  auto* bytes = reinterpret_cast<uint8_t*>(w.raw());
  if (t == DType::F8_E4M3) {
    const std::vector<float> v = random_values(n * k, seed, -448.0f, 448.0f);
    quantize_f8_e4m3(v.data(), bytes, n * k);
  } else {
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < n * k; ++i) {
      const auto b = static_cast<uint8_t>(rng());
      bytes[i] = (b & 0x7C) == 0x7C ? static_cast<uint8_t>(b & ~0x40) : b;  // exponent 31: infinity or NaN
    }
  }
  return w;
}

// Encoded weights with bf16 a take the panel path up to 32 rows of a, decoding each KC slice as the blocked path's
// packer does and adding the slices' sums in its order: rows 0 .. m of a 33-row call (blocked) are the m-row call's
// bytes. M across the 16-column blocks, N across the 12-row tiles, K across the KC slices (256), odd K for fp8.
TEST(MatMulOpt, EncodedPanelPathHasBlockedBits) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  struct Case {
    DType dtype;
    int64_t n, k;
  };
  const Case cases[] = {{DType::Q8_0, 45, 800},    {DType::Q4_0, 13, 288},   {DType::Q5_0, 30, 544},
                        {DType::Q4_K, 37, 768},    {DType::Q5_K, 25, 512},   {DType::Q6_K, 100, 1024},
                        {DType::F8_E4M3, 29, 301}, {DType::F8_E5M2, 17, 513}};
  const MatMulAttrs attrs{false, true};
  uint32_t seed = 700;
  for (const Case& c : cases) {
    const Tensor w = encoded_weight(c.dtype, c.n, c.k, seed++);
    const Tensor a33 = random_tensor(DType::BF16, Shape{33, c.k}, seed++);
    const std::string what =
        std::string(dtype_name(c.dtype)) + " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k);
    EXPECT_EQ(path_of(attrs, a33, w), cpu::gemm::Path::Blocked) << what;
    const Tensor blocked = run_dispatched(OpKind::MatMul, attrs, {a33, w});
    for (int64_t m : {1, 5, 16, 17, 32}) {
      const Tensor a = a33.slice(0, 0, m);
      EXPECT_EQ(path_of(attrs, a, w), m <= 4 ? cpu::gemm::Path::Gemv : cpu::gemm::Path::Panel) << what << " M=" << m;
      const Tensor got = run_dispatched(OpKind::MatMul, attrs, {a, w});
      EXPECT_EQ(std::memcmp(got.raw(), blocked.raw(), got.nbytes()), 0) << what << " M=" << m;
    }
    check(attrs, a33.slice(0, 0, 17), w, what.c_str());
  }
}

// The blocked path on the Linear layout, where a's panel would not fit L2 (so the panel path declines).
TEST(MatMulOpt, BlockedPathLinearLayout) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const Tensor a32 = random_tensor(DType::F32, Shape{300, 600}, 401);
  const Tensor w32 = random_tensor(DType::F32, Shape{37, 600}, 402);
  EXPECT_NE(path_of({false, true}, a32, w32), cpu::gemm::Path::Panel);
  check({false, true}, a32, w32, "f32 blocked Linear");  // check() runs our kernel even where oneDNN is routed
  const Tensor a16 = random_tensor(DType::BF16, Shape{300, 1101}, 403);
  const Tensor w16 = random_tensor(DType::BF16, Shape{37, 1101}, 404);
  EXPECT_EQ(path_of({false, true}, a16, w16), cpu::gemm::Path::Blocked);
  check({false, true}, a16, w16, "bf16 blocked Linear");
}

// The oneDNN route, forced onto every call it can take (the measured rule sends it only f32 blocked-path shapes
// above 1 MFLOP): odd shapes in both b layouts; calls it cannot take (a transposed) still run ours.
TEST(MatMulOpt, OneDNNRoute) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  struct Force {
    Force() { cpu::gemm::force_onednn_for_testing(true); }
    ~Force() { cpu::gemm::force_onednn_for_testing(false); }
  } force;
  uint32_t seed = 500;
  for (DType dt : {DType::F32, DType::BF16})
    for (const Dims& d : kOddDims)
      for (int t = 0; t < 4; ++t) {
        const MatMulAttrs attrs{(t & 1) != 0, (t & 2) != 0};
        const Tensor a = operand(dt, d.m, d.k, attrs.transpose_a, seed++);
        const Tensor b = operand(dt, d.n, d.k, !attrs.transpose_b, seed++);
        const std::string what = std::string(dtype_name(dt)) + " onednn M=" + std::to_string(d.m) +
                                 " N=" + std::to_string(d.n) + " K=" + std::to_string(d.k) + " t=" + std::to_string(t);
        // oneDNN takes a with unit k stride: not transposed, or a single row.
        EXPECT_EQ(path_of(attrs, a, b) == cpu::gemm::Path::OneDNN, !attrs.transpose_a || d.m == 1) << what;
        check(attrs, a, b, what.c_str());
      }
  // Folded batch dims of a (the Linear case x [B, T, D]) are one problem for oneDNN too.
  const Tensor x = random_tensor(DType::F32, Shape{2, 3, 13, 40}, 600);
  const Tensor w = random_tensor(DType::F32, Shape{33, 40}, 601);
  EXPECT_EQ(path_of({false, true}, x, w), cpu::gemm::Path::OneDNN);
  check({false, true}, x, w, "onednn folded Linear");
}

// Several threads calling the oneDNN route at once, on shapes new to the primitive cache and on shared ones.
TEST(MatMulOpt, OneDNNRouteFromSeveralThreads) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  struct Force {
    Force() { cpu::gemm::force_onednn_for_testing(true); }
    ~Force() { cpu::gemm::force_onednn_for_testing(false); }
  } force;
  const Tensor w = random_tensor(DType::F32, Shape{48, 70}, 700);
  std::vector<Tensor> xs, expected;
  for (int i = 0; i < 8; ++i) {
    xs.push_back(random_tensor(DType::F32, Shape{5 + i % 4, 70}, 701 + static_cast<uint32_t>(i)));
    expected.push_back(run_reference(OpKind::MatMul, MatMulAttrs{false, true}, {xs.back(), w}));
  }
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        const size_t i = static_cast<size_t>(t + rep) % xs.size();
        const std::vector<Tensor> in{xs[i], w};
        Tensor out = output_for(OpKind::MatMul, MatMulAttrs{false, true}, in);
        if (!cpu::opt::try_matmul({false, true}, in, out)) ++bad[static_cast<size_t>(t)];
        const auto v = out.to_floats(), e = expected[i].to_floats();
        for (size_t j = 0; j < v.size(); ++j)
          if (std::fabs(v[j] - e[j]) > 1e-4f * (1.0f + std::fabs(e[j]))) ++bad[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[static_cast<size_t>(t)], 0) << "thread " << t;
}

TEST(MatMulOpt, EmptyInnerDimensionGivesZeros) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const Tensor a = Tensor::empty(DType::F32, Shape{5, 0});
  const Tensor b = Tensor::empty(DType::F32, Shape{0, 6});
  Tensor out = Tensor::from_floats(DType::F32, Shape{5, 6}, std::vector<float>(30, 7.0f));
  std::vector<Tensor> inputs{a, b};
  ASSERT_TRUE(cpu::opt::try_matmul({}, inputs, out));
  for (float v : out.to_floats()) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace ltx::test
