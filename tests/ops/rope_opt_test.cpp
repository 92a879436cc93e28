// opt::try_rope (rope_opt_avx512.cpp) against the reference kernel (rope_ref.cpp): both layouts (split half as
// LTX-2.x uses it, interleaved), f32 and bf16, per-head tables [B, H, T, D/2] and tables broadcast over heads and
// batch, head dims that leave vector tails (10, 18, 70) and the DiT's 64/128, x rows with gaps (a head-split view of
// a wider tensor), and a non-contiguous last axis (declined: the dispatcher then runs the reference). Same formulas
// with the same separate f32 roundings, so the outputs must be identical byte for byte.
#include <cstring>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

TEST(RopeOpt, MatchesReferenceByteForByte) {
  if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  struct Case {
    int64_t b, h, t, d;
    bool per_head;  // tables [B, H, T, n] (LTX split RoPE) or [1, 1, T, n] broadcast
  };
  const std::vector<Case> cases = {{1, 2, 5, 10, true},  {2, 3, 7, 18, false}, {1, 4, 9, 64, true},
                                   {1, 2, 3, 128, true}, {2, 1, 6, 70, false}, {1, 1, 1, 2, true}};
  uint32_t seed = 11;
  for (const Case& c : cases) {
    for (RopeMode mode : {RopeMode::SplitHalf, RopeMode::Interleaved}) {
      for (DType dt : {DType::F32, DType::BF16}) {
        const int64_t n = mode == RopeMode::SplitHalf ? c.d / 2 : c.d;
        const Shape table = c.per_head ? Shape{c.b, c.h, c.t, n} : Shape{1, 1, c.t, n};
        // x [B, H, T, D] as the head split of a [B, T, H, D + 2] tensor: rows with gaps, heads strided.
        const Tensor wide = random_tensor(dt, Shape{c.b, c.t, c.h, c.d + 2}, seed++, -3.0f, 3.0f);
        const Tensor x = wide.slice(-1, 1, c.d + 1).permute({0, 2, 1, 3});
        const std::vector<Tensor> in{x, random_tensor(DType::F32, table, seed++),
                                     random_tensor(DType::F32, table, seed++)};
        const std::string what = Shape{c.b, c.h, c.t, c.d}.str() +
                                 (mode == RopeMode::SplitHalf ? " split " : " inter ") + std::string(dtype_name(dt)) +
                                 (c.per_head ? " per-head" : " broadcast");
        const RopeAttrs attrs{mode};
        const Tensor ref = run_reference(OpKind::Rope, attrs, in);
        Tensor opt = output_for(OpKind::Rope, attrs, in);
        ASSERT_TRUE(cpu::opt::try_rope(attrs, in, opt)) << what;
        EXPECT_EQ(std::memcmp(opt.raw(), ref.raw(), ref.nbytes()), 0) << what;
        if (c.d > 2) {  // a non-contiguous last axis is declined; the dispatcher's result is the reference's
          std::vector<Tensor> strided = in;
          strided[0] = non_contiguous(x.contiguous());
          Tensor out = output_for(OpKind::Rope, attrs, strided);
          EXPECT_FALSE(cpu::opt::try_rope(attrs, strided, out)) << what;
          const Tensor dispatched = run_dispatched(OpKind::Rope, attrs, strided);
          EXPECT_EQ(std::memcmp(dispatched.raw(), ref.raw(), ref.nbytes()), 0) << what << " strided";
        }
      }
    }
  }
}

}  // namespace
}  // namespace ltx::test
