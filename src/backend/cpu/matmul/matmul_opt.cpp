// opt::try_matmul: turns a MatMul call into 2-D GEMM problems (matmul_gemm.h) and runs them on our AVX-512
// kernels, or on oneDNN where the measured rule below says it is faster. Batch dims of a that a shared b lets us
// fold into M (the Linear case x [B, T, D]·Wᵀ) become one large problem; the rest loop over the broadcast batch.
#include <array>
#include <atomic>
#include <memory>

#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/matmul/onednn_matmul.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/primitive_cache.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

namespace ltx::cpu {
namespace gemm {

bool avx512_available() { return cpu_features().avx512; }

namespace {

// vdpbf16ps only where both operands already are bf16 (exact products): bf16 activations with bf16 or quantized
// weights (quantized weights are dequantized to f32 and rounded to bf16 panels, as torch runs a dequantized bf16
// Linear). Everything else, f32 activations with bf16 weights included, widens both operands to f32 exactly and
// uses f32 FMA, as the kernel contract (kernels.h) asks.
Compute compute_for(DType a, DType b) {
  if (a == DType::BF16 && (b == DType::BF16 || dtype_is_quantized(b))) return Compute::BF16;
  return Compute::F32;
}

struct BatchDims {  // the output batch dims still to loop over, with a's and b's element strides along them
  int rank = 0;
  int64_t size[kMaxRank] = {};
  int64_t a_stride[kMaxRank] = {};
  int64_t b_stride[kMaxRank] = {};
};

// What plan_for reads of an operand: a tensor, or a shape and dtype laid out contiguously (no data).
struct Operand {
  std::byte* data = nullptr;
  DType dtype = DType::F32;
  Shape shape, strides;
  int rank() const { return shape.rank(); }
  int64_t dim(int i) const { return shape.dim(i); }
};

Operand operand(const Tensor& t) { return {t.raw(), t.dtype(), t.shape(), t.strides()}; }
Operand operand(const TensorMeta& m) { return {nullptr, m.dtype, m.shape, m.shape.contiguous_strides()}; }

int64_t broadcast_stride(const Operand& t, int out_batch_rank, int i) {
  const int d = i - (out_batch_rank - (t.rank() - 2));  // t's dim aligned with out batch dim i
  if (d < 0 || t.dim(d) == 1) return 0;
  return t.strides[d];
}

// A MatMul call as 2-D problems: `p` for the first, then one per remaining output batch index.
struct Plan {
  Problem p;
  BatchDims batch;
};

// The matmul's own output dtype: out's, or with an epilogue (whose store decides out's dtype) what infer gives.
DType product_dtype(const MatMulAttrs& attrs, const Operand& a, const Operand& b, const Operand& out,
                    bool with_epilogue) {
  if (!with_epilogue) return out.dtype;
  const std::array<TensorMeta, 2> metas{TensorMeta{a.dtype, a.shape}, TensorMeta{b.dtype, b.shape}};
  return infer::matmul(attrs, metas).dtype;
}

// False when our kernel does not take the call (dtypes, layouts, CPU). `out` must be contiguous.
bool plan_for(const MatMulAttrs& attrs, const Operand& a, const Operand& b, const Operand& out,
              const MatMulEpilogue* epilogue, bool with_epilogue, Plan& plan) {
  if (!avx512_available()) return false;
  const DType ad = a.dtype, bd = b.dtype, od = product_dtype(attrs, a, b, out, with_epilogue);
  if (!dtype_is_float(ad) || od != ad) return false;
  if (!dtype_is_float(bd) && !(dtype_is_quantized(bd) && b.rank() == 2 && attrs.transpose_b)) return false;

  Problem& p = plan.p;
  const int ra = a.rank(), rb = b.rank();
  p.m = out.dim(-2);
  p.n = out.dim(-1);
  p.k = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  p.a = {a.data, ad, a.strides[attrs.transpose_a ? ra - 1 : ra - 2], a.strides[attrs.transpose_a ? ra - 2 : ra - 1]};
  p.b.data = b.data;
  p.b.dtype = bd;
  if (dtype_is_quantized(bd)) {
    p.b.row_bytes =
        b.strides[0] / static_cast<int64_t>(dtype_block_elems(bd)) * static_cast<int64_t>(dtype_block_bytes(bd));
  } else {
    p.b.sk = b.strides[attrs.transpose_b ? rb - 1 : rb - 2];
    p.b.sn = b.strides[attrs.transpose_b ? rb - 2 : rb - 1];
  }
  p.out = out.data;
  p.out_dtype = od;
  p.ldo = p.n;
  p.compute = compute_for(ad, bd);
  p.epilogue = epilogue;

  BatchDims& batch = plan.batch;
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
  return true;
}

bool plan_for(const MatMulAttrs& attrs, std::span<const Tensor> in, const Tensor& out, const MatMulEpilogue* epilogue,
              Plan& plan) {
  if (in.size() != 2 || !out.is_contiguous()) return false;
  return plan_for(attrs, operand(in[0]), operand(in[1]), operand(out), epilogue, epilogue != nullptr, plan);
}

std::atomic<bool> g_force_onednn{false};

// Routing by measurement (DESIGN: GEMM goes to whichever of our kernels or oneDNN measures faster on the shape).
// Single thread, thread CPU time, best of 3-15 runs, GFLOP/s, ours vs oneDNN reading the same W [N, K] per call
// (oneDNN 2.6, AMD Zen 5, `ltx bench` shapes x [M, K]·W [N, K]ᵀ):
//   bf16, blocked path: 1536×4096·4096×4096 471 vs 459, ·4096×16384 470 vs 467, 1536×16384·16384×4096 474 vs 461,
//        1024×3840·3840×15360 473 vs 479: even, so ours (no second library on the hot path).
//   f32, blocked path: 1536×4096·4096×4096 234 vs 244, ·4096×16384 236 vs 239, 256×1024·1024×1024 225-242 vs
//        237-253: oneDNN 1-5% faster in every run, so f32 goes to oneDNN wherever it can take the call.
//   panel path (small M): 60×640·640×2048 f32 240 vs 208, bf16 470 vs 460; 128×1024·1024×1024 bf16 506 vs 455:
//        ours.
// With 2 threads (wall clock, median of 3-5, the 2-core machine shared with other jobs) oneDNN's OpenMP team
// collapses on short calls whenever a core is taken: 256×1024·1024×1024 f32 ours 67-81 vs oneDNN 19-27 in three
// runs, 60×640·640×2048 ours 200-430 vs 7-9; on the four large f32 shapes the two are even (ours/oneDNN 0.94,
// 0.99, 1.02, 1.01). oneDNN's 1-5% on one thread is not taken: routing by thread count would make a run's f32 bits
// depend on it (another summation order), and the same seed must give the same output on 1 and 2 threads
// (tests/determinism). So the matmuls stay on our kernels, whose sums do not depend on the thread count; oneDNN
// only where forced (`ltx bench --matmul`).
bool onednn_faster(const Problem&) { return g_force_onednn.load(std::memory_order_relaxed); }

// The call as one oneDNN matmul, when it is a single problem oneDNN takes (the same f32 or bf16 dtype
// throughout, a with unit k stride, b dense in either orientation) and the rule above says oneDNN is faster.
// With an epilogue only into an f32 output: oneDNN stores the f32 sums there and the epilogue then runs over them in
// place (a second pass, but the f32 bits of the unfused steps); anything else stays on our kernels, which take the
// epilogue before their single store.
bool onednn_route(const Plan& plan, DType out_dtype) {
  const Problem& p = plan.p;
  if (plan.batch.rank != 0 || p.a.sk != 1 || p.a.sm < p.k || p.k == 0) return false;
  if (p.epilogue != nullptr && (out_dtype != DType::F32 || p.out_dtype != DType::F32)) return false;
  if (p.a.dtype != p.b.dtype || !onednn::supports(p.a.dtype)) return false;
  const bool b_dense = (p.b.sk == 1 && p.b.sn >= p.k) || (p.b.sn == 1 && p.b.sk >= p.n);
  return b_dense && onednn_faster(p);
}

// Primitives by shape, created on first use and shared by all threads (execution is thread-safe: each call brings its
// own scratchpad, onednn_matmul.cpp). A model has a few dozen distinct Linear shapes.
std::shared_ptr<const onednn::Matmul> onednn_primitive(const onednn::MatmulShape& s) {
  using Key = std::array<int64_t, 8>;
  static PrimitiveCache<Key, const onednn::Matmul> cache(512);
  const Key key{s.m, s.n, s.k, static_cast<int64_t>(s.a), s.lda, s.b_sk, s.b_sn, s.ldo};
  return cache.get(key, [&] { return std::make_shared<const onednn::Matmul>(s); });
}

void run_onednn(const Problem& p) {
  onednn::MatmulShape s;
  s.m = p.m, s.n = p.n, s.k = p.k;
  s.a = s.b = s.out = p.a.dtype;
  s.lda = p.a.sm, s.b_sk = p.b.sk, s.b_sn = p.b.sn, s.ldo = p.ldo;
  onednn_primitive(s)->run(p.a.data, p.b.data, p.out);
  if (p.epilogue == nullptr) return;
  parallel_for(p.m, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      p.epilogue->store(r, 0, p.n, reinterpret_cast<const float*>(p.out) + r * p.ldo);  // in place, f32
  });
}

void run_own(const Plan& plan) {
  const Problem& p = plan.p;
  const BatchDims& batch = plan.batch;
  const auto a_es = static_cast<int64_t>(dtype_block_bytes(p.a.dtype));
  const auto b_es = dtype_is_quantized(p.b.dtype) ? 0 : static_cast<int64_t>(dtype_block_bytes(p.b.dtype));
  const auto o_es = static_cast<int64_t>(dtype_block_bytes(p.out_dtype));
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
    q.a.data = p.a.data + a_off * a_es;
    q.b.data = p.b.data + b_off * b_es;
    q.out = p.out + flat * p.m * p.n * o_es;
    q.epilogue_row0 = flat * p.m;
    run_avx512(q);
  }
}

}  // namespace

bool matmul_own(const MatMulAttrs& attrs, std::span<const Tensor> in, const Tensor& out,
                const MatMulEpilogue* epilogue) {
  Plan plan;
  if (!plan_for(attrs, in, out, epilogue, plan)) return false;
  if (out.numel() > 0) run_own(plan);
  return true;
}

namespace {

// Stands in for a fused step's epilogue where only its presence matters (sizing); never called.
class SizingEpilogue final : public MatMulEpilogue {
 public:
  void store(int64_t, int64_t, int64_t, const float*) const override {}
};

}  // namespace

size_t call_scratch_bytes(const MatMulAttrs& attrs, std::span<const TensorMeta> in, const TensorMeta& out,
                          bool with_epilogue) {
  static const SizingEpilogue sizing;
  Plan plan;
  if (in.size() != 2 || !plan_for(attrs, operand(in[0]), operand(in[1]), operand(out),
                                  with_epilogue ? &sizing : nullptr, with_epilogue, plan))
    return 0;
  // Routed as try_matmul routes the call: none of our scratch on oneDNN's route or for an empty output.
  if (out.shape.numel() == 0 || onednn_route(plan, out.dtype)) return 0;
  return static_cast<size_t>(scratch_bytes(plan.p));
}

bool path_for(const MatMulAttrs& attrs, std::span<const Tensor> in, const Tensor& out, Path& path) {
  Plan plan;
  if (!plan_for(attrs, in, out, nullptr, plan)) return false;
  const bool any = out.numel() > 0 && plan.p.k > 0;
  path = out.numel() > 0 && onednn_route(plan, out.dtype()) ? Path::OneDNN
         : any && int8_applies(plan.p)                      ? Path::Int8
         : any && gemv_applies(plan.p)                      ? Path::Gemv
         : any && small_m_applies(plan.p)                   ? Path::Panel
                                                            : Path::Blocked;
  return true;
}

void force_onednn_for_testing(bool on) { g_force_onednn.store(on); }

}  // namespace gemm

namespace opt {

bool try_matmul(const MatMulAttrs& attrs, Inputs in, const Tensor& out, const MatMulEpilogue* epilogue) {
  gemm::Plan plan;
  if (!gemm::plan_for(attrs, in, out, epilogue, plan)) return false;
  if (out.numel() == 0) return true;
  if (gemm::onednn_route(plan, out.dtype()))
    gemm::run_onednn(plan.p);
  else
    gemm::run_own(plan);
  return true;
}

}  // namespace opt

size_t matmul_scratch_bytes(const MatMulAttrs& attrs, std::span<const TensorMeta> in, const TensorMeta& out,
                            bool with_epilogue) {
  return gemm::call_scratch_bytes(attrs, in, out, with_epilogue);
}

}  // namespace ltx::cpu
