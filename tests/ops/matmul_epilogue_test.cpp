// The matmul epilogue (a fused program led by a MatMul, ops/fused.h) on every matmul path: blocked, panel (small
// M), matrix-vector, oneDNN, quantized weights, an unfolded batch, K = 0 and the reference kernel.
//  - f32 outputs: byte-equal to the matmul step followed by the fused chain step (what the compiler replaces).
//  - bf16 outputs: the kernel's f32 sums reach the epilogue unrounded (a capturing epilogue sees values bf16
//    cannot hold, within the f32 summation bound of the reference), and the output is those sums through the
//    chain, rounded once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/elementwise/fused_elementwise.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "core/half.h"
#include "core/tensor.h"
#include "ops/fused_instr.h"
#include "ops/op_test_util.h"

namespace ltx::test {
namespace {

// gelu_tanh(p + bias)·gate over leaves (p, bias, gate): the chain a DiT feed-forward would fuse, with a gate that
// has the output's full shape.
FusedProgram chain() {
  FusedProgram p;
  p.n_leaves = 3;
  p.instrs = {instr(OpKind::Add, {0, 1}), instr(OpKind::GeluTanh, {3}), instr(OpKind::Mul, {4, 2})};
  return p;
}

// The same chain led by the matmul: leaves (a, b, bias, gate), instruction 0 = a·b.
FusedProgram with_matmul(const MatMulAttrs& attrs) {
  FusedProgram p;
  p.n_leaves = 4;
  p.instrs = {instr(OpKind::MatMul, {0, 1}, attrs), instr(OpKind::Add, {4, 2}), instr(OpKind::GeluTanh, {5}),
              instr(OpKind::Mul, {6, 3})};
  return p;
}

struct Case {
  MatMulAttrs attrs;
  Tensor a, b;
};

Tensor product_shape_tensor(const Case& c, DType dtype) {
  const Tensor mm = output_for(OpKind::MatMul, c.attrs, std::vector<Tensor>{c.a, c.b});
  return Tensor::empty(dtype, mm.shape());
}

// The epilogue's output and the unfused pair's (matmul step, then the chain step), through `matmul`.
template <typename MatMul>
void expect_unfused_bits(const Case& c, MatMul matmul, const std::string& what) {
  const Tensor product = output_for(OpKind::MatMul, c.attrs, std::vector<Tensor>{c.a, c.b});
  ASSERT_EQ(product.dtype(), DType::F32) << what;
  const Shape& shape = product.shape();
  const Tensor bias = random_tensor(DType::F32, Shape{shape.dim(-1)}, 91, -2.0f, 2.0f);
  const Tensor gate = random_tensor(DType::F32, shape, 92);
  matmul(std::vector<Tensor>{c.a, c.b}, product, nullptr);
  Tensor expect = Tensor::empty(DType::F32, shape);
  cpu::run_fused(chain(), std::vector<Tensor>{product, bias, gate}, expect);

  const FusedProgram program = with_matmul(c.attrs);
  const std::vector<Tensor> leaves{c.a, c.b, bias, gate};
  Tensor got = Tensor::from_floats(DType::F32, shape, std::vector<float>(static_cast<size_t>(shape.numel()), 7.0f));
  const cpu::fused::FusedEpilogue epilogue(program, leaves, got);
  matmul(std::vector<Tensor>{c.a, c.b}, got, &epilogue);
  EXPECT_EQ(std::memcmp(got.raw(), expect.raw(), got.nbytes()), 0) << what;
}

void expect_unfused_bits_all_kernels(const Case& c, const std::string& what) {
  expect_unfused_bits(
      c,
      [&](std::vector<Tensor> in, const Tensor& out, const cpu::MatMulEpilogue* e) {
        ASSERT_TRUE(cpu::opt::try_matmul(c.attrs, in, out, e)) << what;
      },
      what + " (try_matmul)");
  expect_unfused_bits(
      c,
      [&](std::vector<Tensor> in, const Tensor& out, const cpu::MatMulEpilogue* e) {
        cpu::ref::matmul(c.attrs, in, out, e);
      },
      what + " (reference)");
  // run_fused (what a plan step calls) takes the same kernels.
  const Tensor product = output_for(OpKind::MatMul, c.attrs, std::vector<Tensor>{c.a, c.b});
  const Tensor bias = random_tensor(DType::F32, Shape{product.dim(-1)}, 91, -2.0f, 2.0f);
  const Tensor gate = random_tensor(DType::F32, product.shape(), 92);
  Tensor via_plan_step = Tensor::empty(DType::F32, product.shape());
  cpu::run_fused(with_matmul(c.attrs), std::vector<Tensor>{c.a, c.b, bias, gate}, via_plan_step);
  Tensor unfused = Tensor::empty(DType::F32, product.shape());
  cpu::run(OpKind::MatMul, c.attrs, std::vector<Tensor>{c.a, c.b}, product);
  cpu::run_fused(chain(), std::vector<Tensor>{product, bias, gate}, unfused);
  EXPECT_EQ(std::memcmp(via_plan_step.raw(), unfused.raw(), unfused.nbytes()), 0) << what << " (run_fused)";
}

cpu::gemm::Path path_of(const Case& c) {
  cpu::gemm::Path path{};
  const Tensor out = output_for(OpKind::MatMul, c.attrs, std::vector<Tensor>{c.a, c.b});
  EXPECT_TRUE(cpu::gemm::path_for(c.attrs, std::vector<Tensor>{c.a, c.b}, out, path));
  return path;
}

TEST(MatMulEpilogue, F32HasTheUnfusedBitsOnEveryPath) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const MatMulAttrs linear{false, true};
  // Blocked: K across KC slices (600 = 2 × 300), N across NR strips and not a multiple of 32.
  const Case blocked{linear, random_tensor(DType::F32, {300, 600}, 1), random_tensor(DType::F32, {37, 600}, 2)};
  EXPECT_NE(path_of(blocked), cpu::gemm::Path::Panel);
  expect_unfused_bits_all_kernels(blocked, "f32 blocked");
  const Case mixed{linear, random_tensor(DType::F32, {70, 300}, 3), random_tensor(DType::BF16, {530, 300}, 4)};
  expect_unfused_bits_all_kernels(mixed, "f32·bf16 blocked");
  // Panel: M 33 across the 16/32-column blocks, N 400 across several 192-column epilogue groups.
  const Case panel{linear, random_tensor(DType::F32, {33, 641}, 5), random_tensor(DType::F32, {400, 641}, 6)};
  EXPECT_EQ(path_of(panel), cpu::gemm::Path::Panel);
  expect_unfused_bits_all_kernels(panel, "f32 panel");
  // Matrix-vector: 3 f32 rows against bf16 W, N across 256-output groups.
  const Case gemv{linear, random_tensor(DType::F32, {3, 700}, 7), random_tensor(DType::BF16, {600, 700}, 8)};
  EXPECT_EQ(path_of(gemv), cpu::gemm::Path::Gemv);
  expect_unfused_bits_all_kernels(gemv, "gemv");
  // Quantized weights (blocked path, dequantized panels).
  for (DType q : {DType::Q8_0, DType::Q4_K}) {
    const Case quant{linear, random_tensor(DType::F32, {20, 512}, 9), random_tensor(q, {530, 512}, 10)};
    expect_unfused_bits_all_kernels(quant, std::string("f32·") + std::string(dtype_name(q)));
  }
  // A batch of b that does not fold into M: problems per batch index, rows offset in the epilogue.
  const Case batched{{}, random_tensor(DType::F32, {2, 3, 9, 17}, 11), random_tensor(DType::F32, {3, 17, 35}, 12)};
  expect_unfused_bits_all_kernels(batched, "unfolded batch");
  // K = 0: the epilogue of zeros.
  const Case empty{{}, Tensor::empty(DType::F32, {5, 0}), Tensor::empty(DType::F32, {0, 6})};
  expect_unfused_bits_all_kernels(empty, "K = 0");
}

TEST(MatMulEpilogue, F32OneDNNRouteHasTheUnfusedBits) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  struct Force {
    Force() { cpu::gemm::force_onednn_for_testing(true); }
    ~Force() { cpu::gemm::force_onednn_for_testing(false); }
  } force;
  const Case c{{false, true}, random_tensor(DType::F32, {2, 13, 40}, 13), random_tensor(DType::F32, {33, 40}, 14)};
  EXPECT_EQ(path_of(c), cpu::gemm::Path::OneDNN);
  expect_unfused_bits_all_kernels(c, "onednn");
}

// Records the f32 sums a kernel hands its epilogue.
class Capture final : public cpu::MatMulEpilogue {
 public:
  explicit Capture(const Shape& shape)
      : sums_(Tensor::from_floats(DType::F32, shape, std::vector<float>(static_cast<size_t>(shape.numel()), NAN))) {}
  void store(int64_t row, int64_t col, int64_t count, const float* values) const override {
    std::memcpy(sums_.raw() + (row * sums_.dim(-1) + col) * 4, values, static_cast<size_t>(count) * 4);
  }
  const Tensor& sums() const { return sums_; }

 private:
  Tensor sums_;
};

// bf16 activations: products on vdpbf16ps (blocked, panel) or dequantized weights rounded to bf16.
TEST(MatMulEpilogue, BF16RoundsOnceAfterTheChain) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const MatMulAttrs linear{false, true};
  const std::vector<std::pair<Case, std::string>> cases = {
      {{linear, random_tensor(DType::BF16, {300, 1101}, 21), random_tensor(DType::BF16, {37, 1101}, 22)}, "blocked"},
      {{linear, random_tensor(DType::BF16, {100, 200}, 23), random_tensor(DType::BF16, {70, 200}, 24)}, "one slice"},
      {{linear, random_tensor(DType::BF16, {33, 641}, 25), random_tensor(DType::BF16, {400, 641}, 26)}, "panel"},
      {{linear, random_tensor(DType::BF16, {20, 512}, 27), random_tensor(DType::Q4_K, {530, 512}, 28)}, "q4_k"},
      // The matrix-vector path (1-4 bf16 rows), N across 256-output epilogue groups, plain and encoded W.
      {{linear, random_tensor(DType::BF16, {1, 640}, 29), random_tensor(DType::BF16, {600, 640}, 30)}, "gemv"},
      {{linear, random_tensor(DType::BF16, {4, 512}, 31), random_tensor(DType::Q4_K, {530, 512}, 32)}, "gemv q4_k"},
  };
  for (const auto& [c, what] : cases) {
    const Tensor out = product_shape_tensor(c, DType::BF16);
    const Shape& shape = out.shape();
    const int64_t k = c.a.dim(-1);
    Capture capture(shape);
    ASSERT_TRUE(cpu::opt::try_matmul(c.attrs, std::vector<Tensor>{c.a, c.b}, out, &capture)) << what;
    // Within the f32 summation bound of the reference's sums (products of bf16 values are exact; the quantized
    // weights are rounded to bf16 by the fast kernel: 2^-8 of each term), and not rounded to bf16.
    const Tensor a32 = Tensor::from_floats(DType::F32, c.a.shape(), c.a.to_floats());
    const Tensor b32 = Tensor::from_floats(DType::F32, c.b.shape(), c.b.to_floats());
    std::vector<float> abs_a = a32.to_floats(), abs_b = b32.to_floats();
    for (float& v : abs_a) v = std::fabs(v);
    for (float& v : abs_b) v = std::fabs(v);
    const auto exact = run_reference(OpKind::MatMul, c.attrs, {a32, b32}).to_floats();
    const auto bound = run_reference(OpKind::MatMul, c.attrs,
                                     {Tensor::from_floats(DType::F32, a32.shape(), abs_a),
                                      Tensor::from_floats(DType::F32, b32.shape(), abs_b)})
                           .to_floats();
    const double rounding = dtype_is_quantized(c.b.dtype()) ? 1.0 / 256 : 0.0;
    const auto sums = capture.sums().to_floats();
    size_t bad = 0, unrounded = 0;
    for (size_t i = 0; i < sums.size(); ++i) {
      if (!(std::fabs(static_cast<double>(sums[i]) - exact[i]) <=
            (static_cast<double>(k) * 0x1p-24 + rounding) * bound[i] * 1.01 + 1e-30))
        ++bad;
      if (bf16_to_f32(f32_to_bf16(sums[i])) != sums[i]) ++unrounded;
    }
    EXPECT_EQ(bad, 0u) << what;
    EXPECT_GT(unrounded, sums.size() / 2) << what << ": the sums reached the epilogue rounded to bf16";

    const Tensor bias = random_tensor(DType::F32, Shape{shape.dim(-1)}, 93, -2.0f, 2.0f);
    const Tensor gate = random_tensor(DType::BF16, shape, 94);
    Tensor fused = Tensor::empty(DType::BF16, shape);
    cpu::run_fused(with_matmul(c.attrs), std::vector<Tensor>{c.a, c.b, bias, gate}, fused);
    Tensor once = Tensor::empty(DType::BF16, shape);  // the chain over the unrounded sums, one rounding
    cpu::run_fused(chain(), std::vector<Tensor>{capture.sums(), bias, gate}, once);
    EXPECT_EQ(std::memcmp(fused.raw(), once.raw(), once.nbytes()), 0) << what;
  }
}

}  // namespace
}  // namespace ltx::test
