// opt::try_matmul: turns a MatMul call into 2-D GEMM problems for our AVX-512 kernel (matmul_gemm.h). Batch
// dims of a that a shared b lets us fold into M (the Linear case x [B, T, D]·Wᵀ) become one large problem; the
// rest loop over the broadcast batch.
#include "backend/cpu/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "core/error.h"

namespace ltx::cpu {
namespace gemm {

bool avx512_available() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512bf16");
  return ok;
}

namespace {

// bf16 weights use vdpbf16ps, which needs a in bf16 too: an f32 a is rounded to bf16, as torch does when a
// bf16 Linear meets f32 activations. Quantized weights follow a's dtype: bf16 a -> bf16 panels, f32 a -> exact
// f32 panels. f32 and f16 weights run in f32, exactly.
Compute compute_for(DType a, DType b) {
  if (a == DType::F16) return Compute::F32;
  if (b == DType::BF16) return Compute::BF16;
  if (dtype_is_quantized(b) && a == DType::BF16) return Compute::BF16;
  return Compute::F32;
}

struct BatchDims {  // the output batch dims still to loop over, with a's and b's element strides along them
  int rank = 0;
  int64_t size[kMaxRank] = {};
  int64_t a_stride[kMaxRank] = {};
  int64_t b_stride[kMaxRank] = {};
};

int64_t broadcast_stride(const Tensor& t, int out_batch_rank, int i) {
  const int d = i - (out_batch_rank - (t.rank() - 2));  // t's dim aligned with out batch dim i
  if (d < 0 || t.dim(d) == 1) return 0;
  return t.strides()[d];
}

}  // namespace

bool matmul_own(const MatMulAttrs& attrs, std::span<const Tensor> in, const Tensor& out) {
  if (!avx512_available() || in.size() != 2) return false;
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const DType ad = a.dtype(), bd = b.dtype(), od = out.dtype();
  if (!dtype_is_float(ad) || od != ad || !out.is_contiguous()) return false;
  if (!dtype_is_float(bd) && !(dtype_is_quantized(bd) && b.rank() == 2 && attrs.transpose_b)) return false;
  if (out.numel() == 0) return true;

  Problem p;
  const int ra = a.rank(), rb = b.rank();
  p.m = out.dim(-2);
  p.n = out.dim(-1);
  p.k = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  p.a = {a.raw(), ad, a.strides()[attrs.transpose_a ? ra - 1 : ra - 2],
         a.strides()[attrs.transpose_a ? ra - 2 : ra - 1]};
  p.b.data = b.raw();
  p.b.dtype = bd;
  if (dtype_is_quantized(bd)) {
    p.b.row_bytes = b.strides()[0] / static_cast<int64_t>(dtype_block_elems(bd)) *
                    static_cast<int64_t>(dtype_block_bytes(bd));
  } else {
    p.b.sk = b.strides()[attrs.transpose_b ? rb - 1 : rb - 2];
    p.b.sn = b.strides()[attrs.transpose_b ? rb - 2 : rb - 1];
  }
  p.out_dtype = od;
  p.ldo = p.n;
  p.compute = compute_for(ad, bd);

  BatchDims batch;
  batch.rank = out.rank() - 2;
  for (int i = 0; i < batch.rank; ++i) {
    batch.size[i] = out.dim(i);
    batch.a_stride[i] = broadcast_stride(a, batch.rank, i);
    batch.b_stride[i] = dtype_is_quantized(bd) ? 0 : broadcast_stride(b, batch.rank, i);
  }
  // Fold trailing batch dims into M while b is shared along them and a's rows continue with a uniform stride
  // (out is contiguous, so its rows always do).
  while (batch.rank > 0) {
    const int i = batch.rank - 1;
    if (batch.size[i] != 1 && (batch.b_stride[i] != 0 || batch.a_stride[i] != p.m * p.a.sm)) break;
    p.m *= batch.size[i];
    --batch.rank;
  }

  const auto a_es = static_cast<int64_t>(dtype_block_bytes(ad));
  const auto b_es = dtype_is_quantized(bd) ? 0 : static_cast<int64_t>(dtype_block_bytes(bd));
  const auto o_es = static_cast<int64_t>(dtype_block_bytes(od));
  int64_t count = 1;
  for (int i = 0; i < batch.rank; ++i) count *= batch.size[i];
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, a_off = 0, b_off = 0;
    for (int i = batch.rank - 1; i >= 0; --i) {
      const int64_t idx = rest % batch.size[i];
      rest /= batch.size[i];
      a_off += idx * batch.a_stride[i];
      b_off += idx * batch.b_stride[i];
    }
    Problem q = p;
    q.a.data = a.raw() + a_off * a_es;
    q.b.data = b.raw() + b_off * b_es;
    q.out = out.raw() + flat * p.m * p.n * o_es;
    run_avx512(q);
  }
  return true;
}

}  // namespace gemm

namespace opt {

bool try_matmul(const MatMulAttrs& attrs, Inputs in, const Tensor& out) { return gemm::matmul_own(attrs, in, out); }

}  // namespace opt
}  // namespace ltx::cpu
