// The matmul kernels' lent scratch (backend/cpu/kernel_scratch.h): cpu::matmul_scratch_bytes is exactly the span
// the blocked GEMM takes for a call (it uses a span of that size, and not one 64 bytes smaller), it writes nothing
// past it, takes no thread-local buffer while it holds one, and its results are the same bits with or without it.
// Paths that take no scratch (matrix-vector, oneDNN) report 0.
#include "backend/cpu/kernel_scratch.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "core/tensor.h"
#include "ops/op_test_util.h"

namespace ltx::test {
namespace {

struct Call {
  const char* name;
  MatMulAttrs attrs;
  Tensor a, b;
  bool epilogue = false;  // led by the matmul: out = bf16(a·b + bias), bias f32 [N]
  bool blocked = true;    // our kernels take it on the blocked path (else the matrix-vector one)
};

FusedProgram matmul_add(const MatMulAttrs& attrs) {
  FusedProgram p;
  p.n_leaves = 3;
  FusedInstr mm, add;
  mm.kind = OpKind::MatMul;
  mm.attrs = attrs;
  mm.n_args = 2;
  mm.args[0] = 0;
  mm.args[1] = 1;
  add.kind = OpKind::Add;
  add.n_args = 2;
  add.args[0] = 3;  // the matmul's result
  add.args[1] = 2;
  p.instrs = {mm, add};
  return p;
}

// Runs the call with whatever span is bound on this thread; the output's bytes.
std::vector<std::byte> run_call(const Call& c) {
  const std::array<Tensor, 2> ab{c.a, c.b};
  Tensor product = output_for(OpKind::MatMul, c.attrs, ab);
  if (c.epilogue) {
    const Tensor bias = random_tensor(DType::F32, Shape{product.dim(-1)}, 99);
    Tensor out = Tensor::empty(DType::BF16, product.shape());
    const std::array<Tensor, 3> leaves{c.a, c.b, bias};
    cpu::run_fused(matmul_add(c.attrs), leaves, out);
    product = out;
  } else {
    cpu::run(OpKind::MatMul, c.attrs, ab, product);
  }
  const auto* p = product.raw();
  return {p, p + product.nbytes()};
}

size_t query(const Call& c) {
  const std::array<TensorMeta, 2> in{TensorMeta{c.a.dtype(), c.a.shape()}, TensorMeta{c.b.dtype(), c.b.shape()}};
  const std::array<Tensor, 2> ab{c.a, c.b};
  const Tensor product = output_for(OpKind::MatMul, c.attrs, ab);
  const TensorMeta out{c.epilogue ? DType::BF16 : product.dtype(), product.shape()};
  return cpu::matmul_scratch_bytes(c.attrs, in, out, c.epilogue);
}

struct Buffer {  // 64-byte aligned, filled with a pattern
  explicit Buffer(size_t n) : bytes(n), data(static_cast<std::byte*>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {
    fill();
  }
  void fill() { std::memset(data.get(), 0xa5, bytes); }
  bool untouched(size_t from, size_t to) const {
    for (size_t i = from; i < to; ++i)
      if (data.get()[i] != std::byte{0xa5}) return false;
    return true;
  }
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  size_t bytes;
  std::unique_ptr<std::byte, Free> data;
};

TEST(KernelScratch, QueryIsTheSpanTheGemmTakesAndResultsAreTheSameBits) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 BF16";
  const MatMulAttrs linear{false, true}, plain{false, false};
  const std::vector<Call> calls = {
      {"bf16 linear, K over KC: f32 partials", linear, random_tensor(DType::BF16, {700, 600}, 1),
       random_tensor(DType::BF16, {200, 600}, 2)},
      {"bf16 linear, K within KC: no partials", linear, random_tensor(DType::BF16, {1400, 200}, 3),
       random_tensor(DType::BF16, {200, 200}, 4)},
      {"bf16 batch folded into M", linear, random_tensor(DType::BF16, {2, 350, 600}, 5),
       random_tensor(DType::BF16, {200, 600}, 6)},
      {"f32 plain", plain, random_tensor(DType::F32, {257, 300}, 7), random_tensor(DType::F32, {300, 130}, 8)},
      {"f32 with bf16 weights", linear, random_tensor(DType::F32, {100, 600}, 9),
       random_tensor(DType::BF16, {200, 600}, 10)},
      {"bf16 epilogue, K over KC", linear, random_tensor(DType::BF16, {700, 600}, 11),
       random_tensor(DType::BF16, {200, 600}, 12), true},
      {"bf16 epilogue, K within KC (partials for the epilogue)", linear, random_tensor(DType::BF16, {1400, 200}, 13),
       random_tensor(DType::BF16, {200, 200}, 14), true},
      {"f32 epilogue", plain, random_tensor(DType::F32, {257, 300}, 15), random_tensor(DType::F32, {300, 130}, 16),
       true},
      {"matrix-vector: no scratch", linear, random_tensor(DType::F32, {2, 600}, 17),
       random_tensor(DType::BF16, {200, 600}, 18), false, false},
  };
  for (const Call& c : calls) {
    SCOPED_TRACE(c.name);
    const size_t q = query(c);
    const std::array<Tensor, 2> ab{c.a, c.b};
    cpu::gemm::Path path;
    ASSERT_TRUE(cpu::gemm::path_for(c.attrs, ab, output_for(OpKind::MatMul, c.attrs, ab), path));
    // f32 goes to oneDNN on one thread (matmul_opt.cpp); with an epilogue only into an f32 output (never here).
    const bool onednn = path == cpu::gemm::Path::OneDNN && !c.epilogue;
    if (path != cpu::gemm::Path::OneDNN) EXPECT_EQ(path == cpu::gemm::Path::Blocked, c.blocked);
    EXPECT_EQ(q > 0, c.blocked && !onednn);
    const std::vector<std::byte> expected = run_call(c);  // no span bound: thread-local buffers
    if (q == 0) continue;
    EXPECT_EQ(q % 64, 0u);
    const size_t guard = 4096;
    Buffer buf(q + guard);
    const int64_t fallbacks = cpu::gemm::fallback_allocations();
    {
      const cpu::KernelScratchBinding bind({buf.data.get(), q});
      EXPECT_EQ(run_call(c), expected);
    }
    EXPECT_EQ(cpu::gemm::fallback_allocations(), fallbacks);
    EXPECT_FALSE(buf.untouched(0, q));         // the span was used...
    EXPECT_TRUE(buf.untouched(q, q + guard));  // ...and nothing past it
    buf.fill();
    {
      const cpu::KernelScratchBinding bind({buf.data.get(), q - 64});  // too small: the thread-local buffers
      EXPECT_EQ(run_call(c), expected);
    }
    EXPECT_TRUE(buf.untouched(0, q + guard));
  }
}

TEST(KernelScratch, BindingIsPerThreadAndRestoredWhenItEnds) {
  std::byte outer_bytes[64], inner_bytes[64];
  EXPECT_EQ(cpu::bound_kernel_scratch().data, nullptr);
  {
    const cpu::KernelScratchBinding outer({outer_bytes, 64});
    {
      const cpu::KernelScratchBinding inner({inner_bytes, 32});
      EXPECT_EQ(cpu::bound_kernel_scratch().data, inner_bytes);
      EXPECT_EQ(cpu::bound_kernel_scratch().bytes, 32u);
      std::byte* seen = outer_bytes;
      std::thread([&] { seen = cpu::bound_kernel_scratch().data; }).join();
      EXPECT_EQ(seen, nullptr);
    }
    EXPECT_EQ(cpu::bound_kernel_scratch().data, outer_bytes);
  }
  EXPECT_EQ(cpu::bound_kernel_scratch().data, nullptr);
}

}  // namespace
}  // namespace ltx::test
