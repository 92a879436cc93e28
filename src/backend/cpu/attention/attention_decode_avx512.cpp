// Attention for a few queries against many keys (a generation step: one new token against the KV cache), f32: the
// flash kernel (attention_opt_avx512.cpp) computes a block of 48 queries whatever the count, 48x the work of one.
// Here the query rows of all the heads sharing a key/value head are taken together, so that each key and value row
// is read once: per chunk of kKeyChunk keys, every row's scores (a 16-lane dot product per key, then one horizontal
// sum), its softmax statistics and its weighted values; the chunks are merged in order (flash-decoding), so the
// result does not depend on the thread count. Products and sums stay f32, in another order than the flash kernel's;
// semantics are attention_ref.cpp's (scale·q·k + mask, top-left causal, a row with every key masked gives zeros, a
// NaN score makes its row NaN).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "backend/cpu/attention/attention_opt.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ltx::cpu::opt {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t offset_of(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const int64_t index[4] = {i0, i1, i2, i3};
  return element_byte_offset(t, index) / 4;
}

// dot(a, b) over n floats, 16 lanes then one horizontal sum.
float dot(const float* a, const float* b, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + d), _mm512_loadu_ps(b + d), acc);
  if (d < n) {
    const auto m = static_cast<__mmask16>((1u << (n - d)) - 1);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + d), _mm512_maskz_loadu_ps(m, b + d), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

struct Decode {
  Tensor q, k, v, mask;  // mask broadcast to [B, Hq, Tq, Tk] or undefined
  int64_t heads_q = 0, heads_kv = 0, len_q = 0, len_k = 0, dim = 0, dim_v = 0;
  int64_t group = 0;  // query heads per key/value head
  float scale = 1.0f;
  bool causal = false;
};

// Keys per task: a (batch, kv head) group's keys are split into chunks of this many, each chunk's softmax statistics
// and weighted values computed apart and merged in chunk order, so that the result does not depend on the thread
// count (flash-decoding).
constexpr int64_t kKeyChunk = 128;

// One chunk's part of every query row of a kv head's group: the running max, the sum of exp(score - max), the
// unnormalised output, and whether a score was NaN.
struct Partial {
  std::vector<float> max, sum, out;  // [rows], [rows], [rows][Dv]
  std::vector<uint8_t> nan;
};

// Rows r = (query head in the group) * len_q + query index.
void decode_chunk(const Decode& c, int64_t b, int64_t hk, int64_t j0, int64_t j1, Partial& part,
                  std::vector<float>& s) {
  const int64_t rows = c.group * c.len_q, n = j1 - j0;
  const float* k = c.k.data<float>() + offset_of(c.k, b, hk, 0, 0);
  const float* v = c.v.data<float>() + offset_of(c.v, b, hk, 0, 0);
  const int64_t k_row = c.k.strides()[2], v_row = c.v.strides()[2];
  const float* q[kDecodeMaxQueries * 16];
  const float* m[kDecodeMaxQueries * 16];
  int64_t m_step = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = hk * c.group + r / c.len_q, i = r % c.len_q;
    q[r] = c.q.data<float>() + offset_of(c.q, b, h, i, 0);
    m[r] = c.mask.defined() ? c.mask.data<float>() + offset_of(c.mask, b, h, i, 0) : nullptr;
    m_step = c.mask.defined() ? c.mask.strides()[3] : 0;
  }
  // Scores, each key row read once for every query row.
  for (int64_t j = j0; j < j1; ++j) {
    const float* kj = k + j * k_row;
    for (int64_t r = 0; r < rows; ++r) {
      const bool hidden = c.causal && j > r % c.len_q;  // torch's is_causal: keys j <= i
      float x = hidden ? kNegInf : c.scale * dot(q[r], kj, c.dim);
      if (m[r] && !hidden) x += m[r][j * m_step];
      s[static_cast<size_t>(r * n + j - j0)] = x;
    }
  }
  std::fill(part.out.begin(), part.out.end(), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    float* sr = s.data() + r * n;
    float top = kNegInf;
    bool nan = false;
    for (int64_t j = 0; j < n; ++j) {
      nan |= std::isnan(sr[j]);
      top = std::max(top, sr[j]);
    }
    part.max[static_cast<size_t>(r)] = top;
    part.nan[static_cast<size_t>(r)] = nan;
    float sum = 0.0f;
    if (top != kNegInf && !nan)
      for (int64_t j = 0; j < n; ++j) {
        sr[j] = std::exp(sr[j] - top);
        sum += sr[j];
      }
    part.sum[static_cast<size_t>(r)] = sum;
  }
  // The values weighed by each row's probabilities, each value row read once.
  for (int64_t j = 0; j < n; ++j) {
    const float* vj = v + (j0 + j) * v_row;
    for (int64_t r = 0; r < rows; ++r) {
      if (part.sum[static_cast<size_t>(r)] == 0.0f) continue;
      const float p = s[static_cast<size_t>(r * n + j)];
      if (p == 0.0f) continue;
      const __m512 pv = _mm512_set1_ps(p);
      float* o = part.out.data() + r * c.dim_v;
      int64_t d = 0;
      for (; d + 16 <= c.dim_v; d += 16)
        _mm512_storeu_ps(o + d, _mm512_fmadd_ps(pv, _mm512_loadu_ps(vj + d), _mm512_loadu_ps(o + d)));
      for (; d < c.dim_v; ++d) o[d] += p * vj[d];
    }
  }
}

// The chunks' parts of a group merged in chunk order into `out` (f32 [B, Hq, Tq, Dv], contiguous).
void merge(const Decode& c, std::span<const Partial> parts, const Tensor& out, int64_t b, int64_t hk) {
  const int64_t rows = c.group * c.len_q;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = hk * c.group + r / c.len_q, i = r % c.len_q;
    float* o = out.data<float>() + ((b * c.heads_q + h) * c.len_q + i) * c.dim_v;
    float top = kNegInf;
    bool nan = false;
    for (const Partial& p : parts) {
      top = std::max(top, p.max[static_cast<size_t>(r)]);
      nan |= p.nan[static_cast<size_t>(r)] != 0;
    }
    if (nan || top == kNegInf) {  // a NaN score: the row is NaN; every key masked: zeros
      std::fill(o, o + c.dim_v, nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
      continue;
    }
    std::fill(o, o + c.dim_v, 0.0f);
    float sum = 0.0f;
    for (const Partial& p : parts) {
      if (p.sum[static_cast<size_t>(r)] == 0.0f) continue;
      const float w = std::exp(p.max[static_cast<size_t>(r)] - top);
      sum += w * p.sum[static_cast<size_t>(r)];
      const float* po = p.out.data() + r * c.dim_v;
      for (int64_t d = 0; d < c.dim_v; ++d) o[d] += w * po[d];
    }
    const float inv = 1.0f / sum;
    for (int64_t d = 0; d < c.dim_v; ++d) o[d] *= inv;
  }
}

}  // namespace

bool attention_decode_avx512(const AttentionAttrs& attrs, Inputs in, const Tensor& out) {
  if (in.size() < 3 || in.size() > 4) return false;
  for (const Tensor& t : in)
    if (t.dtype() != DType::F32) return false;
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::attention(attrs, metas);
  if (out.dtype() != DType::F32 || out.shape() != expect.shape || !out.is_contiguous()) return false;
  Decode c;
  c.q = in[0], c.k = in[1], c.v = in[2];
  const int64_t batch = c.q.dim(0);
  c.heads_q = c.q.dim(1), c.heads_kv = c.k.dim(1), c.len_q = c.q.dim(2), c.len_k = c.k.dim(2);
  c.dim = c.q.dim(3), c.dim_v = c.v.dim(3);
  if (c.len_q > kDecodeMaxQueries || c.q.strides()[3] != 1 || c.k.strides()[3] != 1 || c.v.strides()[3] != 1)
    return false;
  if (out.numel() == 0) return true;
  if (in.size() == 4) c.mask = in[3].broadcast_to(Shape{batch, c.heads_q, c.len_q, c.len_k});
  c.scale = attrs.scale > 0.0f ? attrs.scale : 1.0f / std::sqrt(static_cast<float>(c.dim));
  c.causal = attrs.causal;
  c.group = c.heads_q / c.heads_kv;
  if (c.group * c.len_q > kDecodeMaxQueries * 16) return false;
  const int64_t chunks = (c.len_k + kKeyChunk - 1) / kKeyChunk, groups = batch * c.heads_kv;
  const int64_t rows = c.group * c.len_q;
  std::vector<Partial> parts(static_cast<size_t>(groups * chunks));
  for (Partial& p : parts) {
    p.max.resize(static_cast<size_t>(rows));
    p.sum.resize(static_cast<size_t>(rows));
    p.nan.resize(static_cast<size_t>(rows));
    p.out.resize(static_cast<size_t>(rows * c.dim_v));
  }
  parallel_for(groups * chunks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> s(static_cast<size_t>(rows * kKeyChunk));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t g = t / chunks, chunk = t % chunks;
      const int64_t j0 = chunk * kKeyChunk, j1 = std::min(c.len_k, j0 + kKeyChunk);
      decode_chunk(c, g / c.heads_kv, g % c.heads_kv, j0, j1, parts[static_cast<size_t>(t)], s);
    }
  });
  for (int64_t g = 0; g < groups; ++g)
    merge(c, std::span<const Partial>(parts).subspan(static_cast<size_t>(g * chunks), static_cast<size_t>(chunks)), out,
          g / c.heads_kv, g % c.heads_kv);
  return true;
}

}  // namespace ltx::cpu::opt
