// Reference scaled dot-product attention, as torch.nn.functional.scaled_dot_product_attention:
//   out[b,h,i,:] = Σ_j softmax_j(scale·q[b,h,i,:]·k[b,g,j,:] + mask[b,h,i,j]) · v[b,g,j,:],  g = h / (Hq/Hkv).
// Each query row streams over key blocks with an online softmax (running max and denominator, rescaling the
// accumulator when the max grows), so no [Tq, Tk] score matrix exists: scratch is D + Dv + kKeyBlock floats per
// thread, independent of Tq and Tk.
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

namespace ltx::cpu::ref {
namespace {

constexpr int64_t kKeyBlock = 64;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Converts `n` elements of a strided row to f32.
void load_row(const std::byte* p, int64_t stride_bytes, DType t, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = load_as_f32(p + i * stride_bytes, t);
}

struct Views {
  Tensor q, k, v, mask;  // mask: broadcast to [B, Hq, Tq, Tk] (stride-0 where it repeats), or undefined
  int64_t n_heads_q, n_heads_kv, len_q, len_k, dim, dim_v;
  float scale;
  bool causal;
};

// Element offset of [i0, i1, i2, 0] in a 4-D tensor, in bytes.
int64_t offset4(const Tensor& t, int64_t i0, int64_t i1, int64_t i2) {
  const int64_t index[4] = {i0, i1, i2, 0};
  return element_byte_offset(t, index);
}

void attend_row(const Views& w, int64_t b, int64_t h, int64_t i, float* q_row, float* acc, float* scores,
                std::byte* out_row, DType out_dtype) {
  const int64_t hk = h / (w.n_heads_q / w.n_heads_kv);
  const auto qs = w.q.strides()[3] * static_cast<int64_t>(dtype_block_bytes(w.q.dtype()));
  const auto ks = w.k.strides()[3] * static_cast<int64_t>(dtype_block_bytes(w.k.dtype()));
  const auto vs = w.v.strides()[3] * static_cast<int64_t>(dtype_block_bytes(w.v.dtype()));
  load_row(w.q.raw() + offset4(w.q, b, h, i), qs, w.q.dtype(), w.dim, q_row);
  for (int64_t d = 0; d < w.dim_v; ++d) acc[d] = 0.0f;

  // torch's is_causal keeps keys j <= i (a lower-triangular mask aligned at the top left, also when Tq != Tk).
  const int64_t n_keys = w.causal ? std::min(w.len_k, i + 1) : w.len_k;
  float running_max = kNegInf;
  float denom = 0.0f;
  bool saw_nan = false;
  for (int64_t j0 = 0; j0 < n_keys; j0 += kKeyBlock) {
    const int64_t block = std::min(kKeyBlock, n_keys - j0);
    float block_max = kNegInf;
    for (int64_t jj = 0; jj < block; ++jj) {
      const std::byte* k_row = w.k.raw() + offset4(w.k, b, hk, j0 + jj);
      float dot = 0.0f;
      for (int64_t d = 0; d < w.dim; ++d) dot += q_row[d] * load_as_f32(k_row + d * ks, w.k.dtype());
      float s = dot * w.scale;
      if (w.mask.defined()) {
        const int64_t index[4] = {b, h, i, j0 + jj};
        s += load_as_f32(w.mask.raw() + element_byte_offset(w.mask, index), w.mask.dtype());
      }
      saw_nan |= std::isnan(s);
      scores[jj] = s;
      block_max = std::max(block_max, s);
    }
    const float new_max = std::max(running_max, block_max);
    if (new_max == kNegInf) continue;  // every key so far is masked out: nothing to accumulate yet
    const float correction = std::exp(running_max - new_max);  // exp(-inf) = 0 on the first live block
    denom *= correction;
    for (int64_t d = 0; d < w.dim_v; ++d) acc[d] *= correction;
    for (int64_t jj = 0; jj < block; ++jj) {
      const float p = std::exp(scores[jj] - new_max);
      denom += p;
      const std::byte* v_row = w.v.raw() + offset4(w.v, b, hk, j0 + jj);
      for (int64_t d = 0; d < w.dim_v; ++d) acc[d] += p * load_as_f32(v_row + d * vs, w.v.dtype());
    }
    running_max = new_max;
  }
  // A row whose keys are all masked (-inf) gives zeros, as torch's SDPA does (its math and CPU flash kernels
  // both return 0 there, checked with torch 2.15); a NaN score still makes the row NaN.
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out_dtype));
  for (int64_t d = 0; d < w.dim_v; ++d) {
    float o = denom > 0.0f ? acc[d] / denom : 0.0f;
    if (saw_nan) o = std::numeric_limits<float>::quiet_NaN();
    store_from_f32(out_row + d * oes, out_dtype, o);
  }
}

}  // namespace

void attention(const AttentionAttrs& attrs, Inputs in, const Tensor& out) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::attention(attrs, metas);
  LTX_CHECK(out.dtype() == expect.dtype && out.shape() == expect.shape && out.is_contiguous(), "cpu",
            "attention: output ", out.describe(), " must be a contiguous ", dtype_name(expect.dtype),
            expect.shape.str());
  Views w;
  w.q = in[0];
  w.k = in[1];
  w.v = in[2];
  const int64_t batch = w.q.dim(0);
  w.n_heads_q = w.q.dim(1);
  w.n_heads_kv = w.k.dim(1);
  w.len_q = w.q.dim(2);
  w.len_k = w.k.dim(2);
  w.dim = w.q.dim(3);
  w.dim_v = w.v.dim(3);
  if (in.size() == 4) w.mask = in[3].broadcast_to(Shape{batch, w.n_heads_q, w.len_q, w.len_k});
  w.scale = attrs.scale > 0.0f ? attrs.scale : 1.0f / std::sqrt(static_cast<float>(w.dim));
  w.causal = attrs.causal;

  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  parallel_for(batch * w.n_heads_q * w.len_q, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> q_row(static_cast<size_t>(w.dim));       // [D]
    std::vector<float> acc(static_cast<size_t>(w.dim_v));       // [Dv]
    std::vector<float> scores(static_cast<size_t>(kKeyBlock));  // [kKeyBlock]
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % w.len_q;
      const int64_t h = (r / w.len_q) % w.n_heads_q;
      const int64_t b = r / (w.len_q * w.n_heads_q);
      attend_row(w, b, h, i, q_row.data(), acc.data(), scores.data(), out.raw() + r * w.dim_v * oes, out.dtype());
    }
  });
}

}  // namespace ltx::cpu::ref
