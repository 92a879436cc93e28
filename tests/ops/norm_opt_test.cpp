// opt::try_norm (norm_opt_avx512.cpp) against the reference kernel (norm_ref.cpp): RmsNorm (no weight, plain,
// 1 + w) and LayerNorm (none, weight, weight + bias) on odd row counts and lengths (vector tails, a 16-row group
// tail, a single element), f32 and bf16 in and out, rows with gaps between them (a slice of a wider tensor) and a
// non-contiguous last axis (declined, so the dispatcher runs the reference). The kernel reproduces the
// reference's summation order, so outputs must be identical byte for byte.
#include <cstring>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

NormAttrs attrs(NormWeight w, bool bias, float eps) {
  NormAttrs a;
  a.eps = eps;
  a.weight = w;
  a.bias = bias;
  return a;
}

TEST(NormOpt, MatchesReferenceByteForByte) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  struct Form {
    OpKind kind;
    NormAttrs a;
  };
  const std::vector<Form> forms = {
      {OpKind::RmsNorm, attrs(NormWeight::None, false, 1e-6f)},
      {OpKind::RmsNorm, attrs(NormWeight::Plain, false, 1e-5f)},
      {OpKind::RmsNorm, attrs(NormWeight::OnePlus, false, 1e-6f)},
      {OpKind::LayerNorm, attrs(NormWeight::None, false, 1e-6f)},
      {OpKind::LayerNorm, attrs(NormWeight::Plain, false, 1e-5f)},
      {OpKind::LayerNorm, attrs(NormWeight::Plain, true, 1e-5f)},
  };
  const std::vector<Shape> shapes = {{1, 1}, {3, 7}, {17, 16}, {2, 9, 33}, {35, 300}};
  uint32_t seed = 1;
  for (const Form& f : forms) {
    for (const Shape& shape : shapes) {
      for (DType dtype : {DType::F32, DType::BF16}) {
        const int64_t n = shape.dim(-1);
        // Rows with a gap: the first n of every row of a [.., n + 3] tensor, offset so the mean is not 0.
        Shape wide = shape;
        wide[shape.rank() - 1] = n + 3;
        const Tensor x = random_tensor(dtype, wide, seed++, -2.0f, 3.0f).slice(-1, 1, n + 1);
        std::vector<Tensor> in{x};
        if (f.a.weight != NormWeight::None) in.push_back(random_tensor(DType::F32, {n}, seed++, 0.5f, 1.5f));
        if (f.a.bias) in.push_back(random_tensor(DType::F32, {n}, seed++));
        const std::string what =
            std::string(op_name(f.kind)) + " " + shape.str() + " " + std::string(dtype_name(dtype));
        const Tensor ref = run_reference(f.kind, f.a, in);
        Tensor opt = output_for(f.kind, f.a, in);
        ASSERT_TRUE(cpu::opt::try_norm(f.kind, f.a, in, opt)) << what;
        EXPECT_EQ(std::memcmp(opt.raw(), ref.raw(), ref.nbytes()), 0) << what;
        // bf16 output from f32 input, as a production chain stores it.
        Tensor opt16 = Tensor::empty(DType::BF16, ref.shape());
        if (dtype == DType::F32) {
          ASSERT_TRUE(cpu::opt::try_norm(f.kind, f.a, in, opt16)) << what;
          const Tensor ref_direct = Tensor::empty(DType::BF16, ref.shape());
          cpu::run_reference(f.kind, f.a, in, ref_direct);
          EXPECT_EQ(std::memcmp(opt16.raw(), ref_direct.raw(), ref_direct.nbytes()), 0) << what << " -> bf16";
        }
        // A non-contiguous last axis is declined; the dispatcher's result is the reference's.
        if (shape.dim(-2) > 1 && n > 1) {
          std::vector<Tensor> strided = in;
          strided[0] = non_contiguous(x.contiguous());
          Tensor out = output_for(f.kind, f.a, strided);
          EXPECT_FALSE(cpu::opt::try_norm(f.kind, f.a, strided, out)) << what;
          const Tensor dispatched = run_dispatched(f.kind, f.a, strided);
          EXPECT_EQ(std::memcmp(dispatched.raw(), ref.raw(), ref.nbytes()), 0) << what << " strided";
        }
      }
    }
  }
}

}  // namespace
}  // namespace ltx::test
