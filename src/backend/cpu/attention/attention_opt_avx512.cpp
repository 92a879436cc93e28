// Flash-style attention on AVX-512: each task is one (batch, head, block of kQBlock queries); it streams over
// blocks of kKBlock keys with an online softmax (running max m and denominator l per query, the output
// accumulator rescaled by exp(m_old - m_new) when the max grows), so no [Tq, Tk] matrix ever exists.
//
// Scores are kept transposed, s[key][query], with 16 queries per vector: the QK product broadcasts one key
// element against a packed qᵀ panel (no packing of K), and the softmax statistics are per-lane maxima and sums
// (no horizontal reductions). The PV product broadcasts p[key][query] against rows of V. Per key block: the QK
// tiles store scaled scores, one pass finds the maxima, one pass takes the exponentials (bf16: straight into the
// key pairs the PV product reads), and the PV tiles rescale the accumulator as they load it.
//   f32 inputs:  f32 FMA throughout (products and sums in f32, as the reference).
//   bf16 inputs: vdpbf16ps for q·k (exact products of the bf16 inputs, f32 sums) and for p·v with p rounded to
//                bf16 (relative error <= 2^-9 per weight, the precision a bf16 engine stores probabilities in);
//                softmax and the denominator stay f32.
// Semantics follow attention_ref.cpp: scale·q·k + mask, torch's top-left causal mask (keys j <= i), rows with
// every key masked give zeros, a NaN score makes its row NaN.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/attention/attention_opt.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ltx::cpu::opt {
namespace {

constexpr int kQVecs = 3;             // query vectors per task
constexpr int kQBlock = 16 * kQVecs;  // queries per task
constexpr int kKBlock = 64;           // keys per online-softmax step
constexpr int kKTile = 8;             // keys per QK register tile (8 x 3 accumulators)
constexpr int kPVRows = 6;            // query rows per PV register tile
constexpr int kPVVecs = 4;            // Dv vectors per PV register tile (6 x 4 accumulators)
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// exp(x) for x <= 0 or NaN (softmax arguments after subtracting the running max): vec::exp_split's 2^n·e^r. Below -87
// (where e^x nears f32's smallest normal) the result is 0, so exp(-inf) = 0 exactly; NaN propagates.
inline __m512 exp_nonpositive(__m512 x) {
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_NLT_UQ);
  x = _mm512_max_ps(_mm512_set1_ps(-87.0f), x);  // the second operand (x) wins when it is NaN
  __m512 n;
  const __m512 p = vec::exp_split(x, &n);
  return _mm512_maskz_scalef_ps(live, p, n);
}

using vec::to_bf16_rne;

inline uint16_t bits16(const std::byte* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

struct Call {
  Tensor q, k, v, mask;  // mask: broadcast to [B, Hq, Tq, Tk], or undefined
  int64_t batch = 0, heads_q = 0, heads_kv = 0, len_q = 0, len_k = 0, dim = 0, dim_v = 0;
  int64_t dim_pairs = 0;  // bf16: ceil(D / 2)
  int64_t dv_pad = 0;     // Dv rounded up to 16
  float scale = 1.0f;
  bool causal = false;
  bool bf16 = false;
  bool native_bf16 = false;  // vdpbf16ps (AVX512_BF16) for the bf16 products, else its AVX-512F emulation
};

// K and V of one (batch, kv head) as the kernels read them: key j's row at k + j·k_row elements (D contiguous),
// V as f32 rows at v + j·v_row (Dv contiguous) or, for bf16, as key pairs [ceil(Tk/2)][dv_pad][2].
struct HeadKV {
  const std::byte* k = nullptr;
  int64_t k_row = 0;
  const std::byte* v = nullptr;
  int64_t v_row = 0;
};

// Per-thread scratch, sized once per parallel chunk.
struct Workspace {
  std::vector<float> qt;      // f32: [D][kQBlock]; bf16: viewed as uint16 [D/2][kQBlock][2]
  std::vector<float> s;       // [kKBlock][kQBlock] scores, then probabilities
  std::vector<uint16_t> p16;  // [kKBlock/2][kQBlock][2] bf16 probabilities
  std::vector<float> o;       // [kQBlock][dv_pad] unnormalised output
  alignas(64) float m[kQBlock], l[kQBlock], corr[kQBlock];
  __mmask16 nan[kQVecs];
  std::vector<float> k_pack_f32, v_pack_f32;  // [Tk][D], [Tk][Dv] when the input's layout needs it
  std::vector<uint16_t> k_pack16, v_pack16;   // [Tk][2·D/2], [ceil(Tk/2)][dv_pad][2]
  int64_t packed_b = -1, packed_h = -1;
};

int64_t elem_offset(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const int64_t index[4] = {i0, i1, i2, i3};
  return element_byte_offset(t, index);
}

// Makes K and V of (b, hk) readable by the kernels, packing only what the input layout does not already give.
HeadKV prepare_head(const Call& c, Workspace& ws, int64_t b, int64_t hk) {
  HeadKV h;
  const int64_t ks_j = c.k.strides()[2], ks_d = c.k.strides()[3];
  const int64_t vs_j = c.v.strides()[2], vs_d = c.v.strides()[3];
  const std::byte* k0 = c.k.raw() + elem_offset(c.k, b, hk, 0, 0);
  const std::byte* v0 = c.v.raw() + elem_offset(c.v, b, hk, 0, 0);
  const bool reuse = ws.packed_b == b && ws.packed_h == hk;
  ws.packed_b = b;
  ws.packed_h = hk;
  if (!c.bf16) {
    if (ks_d == 1) {
      h.k = k0, h.k_row = ks_j;
    } else {
      ws.k_pack_f32.resize(static_cast<size_t>(c.len_k * c.dim));
      if (!reuse)
        for (int64_t j = 0; j < c.len_k; ++j)
          for (int64_t d = 0; d < c.dim; ++d)
            ws.k_pack_f32[static_cast<size_t>(j * c.dim + d)] = load_as_f32(k0 + (j * ks_j + d * ks_d) * 4, DType::F32);
      h.k = reinterpret_cast<const std::byte*>(ws.k_pack_f32.data()), h.k_row = c.dim;
    }
    if (vs_d == 1) {
      h.v = v0, h.v_row = vs_j;
    } else {
      ws.v_pack_f32.resize(static_cast<size_t>(c.len_k * c.dim_v));
      if (!reuse)
        for (int64_t j = 0; j < c.len_k; ++j)
          for (int64_t d = 0; d < c.dim_v; ++d)
            ws.v_pack_f32[static_cast<size_t>(j * c.dim_v + d)] =
                load_as_f32(v0 + (j * vs_j + d * vs_d) * 4, DType::F32);
      h.v = reinterpret_cast<const std::byte*>(ws.v_pack_f32.data()), h.v_row = c.dim_v;
    }
    return h;
  }
  if (ks_d == 1 && c.dim % 2 == 0) {
    h.k = k0, h.k_row = ks_j;
  } else {  // rows of whole pairs, the odd tail zero
    const int64_t row = 2 * c.dim_pairs;
    ws.k_pack16.resize(static_cast<size_t>(c.len_k * row));
    if (!reuse) {
      std::fill(ws.k_pack16.begin(), ws.k_pack16.end(), uint16_t{0});
      for (int64_t j = 0; j < c.len_k; ++j)
        for (int64_t d = 0; d < c.dim; ++d)
          ws.k_pack16[static_cast<size_t>(j * row + d)] = bits16(k0 + (j * ks_j + d * ks_d) * 2);
    }
    h.k = reinterpret_cast<const std::byte*>(ws.k_pack16.data()), h.k_row = row;
  }
  const int64_t pairs = (c.len_k + 1) / 2;
  ws.v_pack16.resize(static_cast<size_t>(pairs * c.dv_pad * 2));
  if (!reuse && vs_d == 1 && c.dim_v % 32 == 0) {
    // Rows j and j + 1 (zeros past the last key) interleaved 32 elements at a time.
    alignas(64) uint16_t first[32], second[32];
    for (int e = 0; e < 32; ++e) {
      first[e] = static_cast<uint16_t>(e / 2 + (e & 1) * 32);  // a0 b0 a1 b1 ... a15 b15
      second[e] = static_cast<uint16_t>(first[e] + 16);        // a16 b16 ... a31 b31
    }
    const __m512i lo = _mm512_load_si512(first), hi = _mm512_load_si512(second);
    for (int64_t j2 = 0; j2 < pairs; ++j2) {
      const std::byte* a = v0 + 2 * j2 * vs_j * 2;
      const bool has_b = 2 * j2 + 1 < c.len_k;
      uint16_t* dst = ws.v_pack16.data() + j2 * c.dv_pad * 2;
      for (int64_t d = 0; d < c.dim_v; d += 32) {
        const __m512i ra = _mm512_loadu_si512(a + d * 2);
        const __m512i rb = has_b ? _mm512_loadu_si512(a + (vs_j + d) * 2) : _mm512_setzero_si512();
        _mm512_storeu_si512(dst + 2 * d, _mm512_permutex2var_epi16(ra, lo, rb));
        _mm512_storeu_si512(dst + 2 * d + 32, _mm512_permutex2var_epi16(ra, hi, rb));
      }
    }
  } else if (!reuse) {
    std::fill(ws.v_pack16.begin(), ws.v_pack16.end(), uint16_t{0});
    for (int64_t j = 0; j < c.len_k; ++j)
      for (int64_t d = 0; d < c.dim_v; ++d)
        ws.v_pack16[static_cast<size_t>(((j / 2) * c.dv_pad + d) * 2 + (j & 1))] =
            bits16(v0 + (j * vs_j + d * vs_d) * 2);
  }
  h.v = reinterpret_cast<const std::byte*>(ws.v_pack16.data()), h.v_row = c.dv_pad * 2;
  return h;
}

// qᵀ panel of queries [i0, i0 + nq), zero beyond nq (and beyond D for bf16 pairs).
void pack_q(const Call& c, Workspace& ws, int64_t b, int64_t h, int64_t i0, int64_t nq) {
  const int64_t qs_i = c.q.strides()[2], qs_d = c.q.strides()[3];
  const std::byte* q0 = c.q.raw() + elem_offset(c.q, b, h, i0, 0);
  if (!c.bf16) {
    float* qt = ws.qt.data();
    std::fill(qt, qt + c.dim * kQBlock, 0.0f);
    for (int64_t i = 0; i < nq; ++i)
      for (int64_t d = 0; d < c.dim; ++d) qt[d * kQBlock + i] = load_as_f32(q0 + (i * qs_i + d * qs_d) * 4, DType::F32);
    return;
  }
  auto* qt = reinterpret_cast<uint16_t*>(ws.qt.data());
  if (nq == kQBlock && qs_d == 1 && c.dim % 2 == 0 && qs_i * 2 * kQBlock < (int64_t{1} << 31)) {
    // A full block of rows with whole pairs: pair d2 of 16 queries at a time is one gather (offsets in bytes).
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512i rows[kQVecs];
    for (int v = 0; v < kQVecs; ++v)
      rows[v] = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * v)),
                                   _mm512_set1_epi32(static_cast<int>(qs_i * 2)));
    for (int64_t d2 = 0; d2 < c.dim_pairs; ++d2)
      for (int v = 0; v < kQVecs; ++v)
        _mm512_storeu_si512(qt + (d2 * kQBlock + 16 * v) * 2, _mm512_i32gather_epi32(rows[v], q0 + d2 * 4, 1));
    return;
  }
  std::fill(qt, qt + c.dim_pairs * kQBlock * 2, uint16_t{0});
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t d = 0; d < c.dim; ++d)
      qt[((d / 2) * kQBlock + i) * 2 + (d & 1)] = bits16(q0 + (i * qs_i + d * qs_d) * 2);
}

// s[j][0..kQBlock) = scale·(q·k_j) for the kKTile keys at rows krow[j] (f32).
void qk_tile_f32(const float* qt, int64_t dim, const float* const* krow, __m512 scale, float* s) {
  __m512 acc[kKTile][kQVecs];
  for (auto& row : acc)
    for (auto& a : row) a = _mm512_setzero_ps();
  for (int64_t d = 0; d < dim; ++d) {
    __m512 qv[kQVecs];
    for (int v = 0; v < kQVecs; ++v) qv[v] = _mm512_loadu_ps(qt + d * kQBlock + 16 * v);
    for (int j = 0; j < kKTile; ++j) {
      const __m512 kb = _mm512_set1_ps(krow[j][d]);
      for (int v = 0; v < kQVecs; ++v) acc[j][v] = _mm512_fmadd_ps(kb, qv[v], acc[j][v]);
    }
  }
  for (int j = 0; j < kKTile; ++j)
    for (int v = 0; v < kQVecs; ++v) _mm512_storeu_ps(s + j * kQBlock + 16 * v, _mm512_mul_ps(acc[j][v], scale));
}

// As qk_tile_f32 for bf16: d in pairs, one vdpbf16ps (or its emulation) per pair.
template <bool Native>
void qk_tile_bf16(const uint16_t* qt, int64_t pairs, const uint16_t* const* krow, __m512 scale, float* s) {
  __m512 acc[kKTile][kQVecs];
  for (auto& row : acc)
    for (auto& a : row) a = _mm512_setzero_ps();
  for (int64_t d2 = 0; d2 < pairs; ++d2) {
    __m512i qv[kQVecs];
    for (int v = 0; v < kQVecs; ++v) qv[v] = _mm512_loadu_si512(qt + (d2 * kQBlock + 16 * v) * 2);
    for (int j = 0; j < kKTile; ++j) {
      int32_t pair;
      std::memcpy(&pair, krow[j] + 2 * d2, 4);
      const __m512i kb = _mm512_set1_epi32(pair);
      for (int v = 0; v < kQVecs; ++v) acc[j][v] = vec::dpbf16<Native>(acc[j][v], qv[v], kb);
    }
  }
  for (int j = 0; j < kKTile; ++j)
    for (int v = 0; v < kQVecs; ++v) _mm512_storeu_ps(s + j * kQBlock + 16 * v, _mm512_mul_ps(acc[j][v], scale));
}

// o[r][c0 + 16·n] = corr[r]·o[r][c0 + 16·n] + Σ_j p[j][r] · v_j[c0 + 16·n] for kPVRows rows (the online
// softmax's rescale of the accumulator, applied as the tile loads it); the last vector masked by `tail`.
template <int NV>
void pv_tile_f32(float* o, int64_t ldo, const float* corr, const float* p, const float* v, int64_t v_row, int64_t nk,
                 __mmask16 tail) {
  __m512 acc[kPVRows][NV];
  for (int r = 0; r < kPVRows; ++r)
    for (int n = 0; n < NV; ++n)
      acc[r][n] = _mm512_mul_ps(_mm512_loadu_ps(o + r * ldo + 16 * n), _mm512_set1_ps(corr[r]));
  for (int64_t j = 0; j < nk; ++j) {
    __m512 vv[NV];
    for (int n = 0; n < NV; ++n)
      vv[n] =
          n == NV - 1 ? _mm512_maskz_loadu_ps(tail, v + j * v_row + 16 * n) : _mm512_loadu_ps(v + j * v_row + 16 * n);
    for (int r = 0; r < kPVRows; ++r) {
      const __m512 pb = _mm512_set1_ps(p[j * kQBlock + r]);
      for (int n = 0; n < NV; ++n) acc[r][n] = _mm512_fmadd_ps(pb, vv[n], acc[r][n]);
    }
  }
  for (int r = 0; r < kPVRows; ++r)
    for (int n = 0; n < NV; ++n) _mm512_storeu_ps(o + r * ldo + 16 * n, acc[r][n]);
}

// bf16: p as key pairs [j2][query][2], v as key pairs [j2][dv_pad][2] (v_row = 2·dv_pad elements per pair).
template <int NV, bool Native>
void pv_tile_bf16(float* o, int64_t ldo, const float* corr, const uint16_t* p, const uint16_t* v, int64_t v_row,
                  int64_t n_pairs) {
  __m512 acc[kPVRows][NV];
  for (int r = 0; r < kPVRows; ++r)
    for (int n = 0; n < NV; ++n)
      acc[r][n] = _mm512_mul_ps(_mm512_loadu_ps(o + r * ldo + 16 * n), _mm512_set1_ps(corr[r]));
  for (int64_t j2 = 0; j2 < n_pairs; ++j2) {
    __m512i vv[NV];
    for (int n = 0; n < NV; ++n) vv[n] = _mm512_loadu_si512(v + j2 * v_row + 32 * n);
    for (int r = 0; r < kPVRows; ++r) {
      int32_t pair;
      std::memcpy(&pair, p + (j2 * kQBlock + r) * 2, 4);
      const __m512i pb = _mm512_set1_epi32(pair);
      for (int n = 0; n < NV; ++n) acc[r][n] = vec::dpbf16<Native>(acc[r][n], vv[n], pb);
    }
  }
  for (int r = 0; r < kPVRows; ++r)
    for (int n = 0; n < NV; ++n) _mm512_storeu_ps(o + r * ldo + 16 * n, acc[r][n]);
}

template <typename Fn>
void dispatch_nv(int nv, Fn&& fn) {
  switch (nv) {
    case 1:
      fn(std::integral_constant<int, 1>{});
      break;
    case 2:
      fn(std::integral_constant<int, 2>{});
      break;
    case 3:
      fn(std::integral_constant<int, 3>{});
      break;
    default:
      fn(std::integral_constant<int, 4>{});
      break;
  }
}

// Scores of keys [j0, j0 + nk) for the task's queries into ws.s (scaled, masked; -inf where causal excludes).
void scores(const Call& c, Workspace& ws, const HeadKV& kv, int64_t b, int64_t h, int64_t i0, int64_t nq, int64_t j0,
            int64_t nk) {
  const __m512 scale = _mm512_set1_ps(c.scale);
  for (int64_t t = 0; t < nk; t += kKTile) {
    float* s = ws.s.data() + t * kQBlock;
    if (!c.bf16) {
      const float* rows[kKTile];
      for (int j = 0; j < kKTile; ++j)  // keys past nk repeat the last one; their scores are never read
        rows[j] = reinterpret_cast<const float*>(kv.k) + (j0 + std::min<int64_t>(t + j, nk - 1)) * kv.k_row;
      qk_tile_f32(ws.qt.data(), c.dim, rows, scale, s);
    } else {
      const uint16_t* rows[kKTile];
      for (int j = 0; j < kKTile; ++j)
        rows[j] = reinterpret_cast<const uint16_t*>(kv.k) + (j0 + std::min<int64_t>(t + j, nk - 1)) * kv.k_row;
      (c.native_bf16 ? qk_tile_bf16<true> : qk_tile_bf16<false>)(reinterpret_cast<const uint16_t*>(ws.qt.data()),
                                                                 c.dim_pairs, rows, scale, s);
    }
  }
  if (c.mask.defined()) {
    const int64_t ms_i = c.mask.strides()[2], ms_j = c.mask.strides()[3];
    const auto mes = static_cast<int64_t>(dtype_block_bytes(c.mask.dtype()));
    const std::byte* m0 = c.mask.raw() + elem_offset(c.mask, b, h, i0, j0);
    for (int64_t j = 0; j < nk; ++j) {
      float* s = ws.s.data() + j * kQBlock;
      if (ms_i == 0) {  // a key mask, the same for every query
        const __m512 mv = _mm512_set1_ps(load_as_f32(m0 + j * ms_j * mes, c.mask.dtype()));
        for (int v = 0; v < kQVecs; ++v) _mm512_storeu_ps(s + 16 * v, _mm512_add_ps(_mm512_loadu_ps(s + 16 * v), mv));
      } else {
        for (int64_t i = 0; i < nq; ++i) s[i] += load_as_f32(m0 + (i * ms_i + j * ms_j) * mes, c.mask.dtype());
      }
    }
  }
  if (c.causal && j0 + nk - 1 > i0) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (int64_t j = std::max<int64_t>(0, i0 + 1 - j0); j < nk; ++j)
      for (int v = 0; v < kQVecs; ++v) {  // queries i with i0 + i < j0 + j see no key j
        const __m512i qi = _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int>(i0 + 16 * v)));
        const __mmask16 hide = _mm512_cmplt_epi32_mask(qi, _mm512_set1_epi32(static_cast<int>(j0 + j)));
        float* s = ws.s.data() + j * kQBlock + 16 * v;
        _mm512_storeu_ps(s, _mm512_mask_mov_ps(_mm512_loadu_ps(s), hide, _mm512_set1_ps(kNegInf)));
      }
  }
}

// Online-softmax step over ws.s[0..nk): m and l updated, ws.corr = exp(m_old - m_new) for rescaling the
// accumulator, and the probabilities written in place (f32) or, for bf16, only as bf16 key pairs in ws.p16 (the
// PV product reads nothing else; l sums the unrounded f32 values in key order either way).
void softmax_step(const Call& c, Workspace& ws, int64_t nk) {
  // Pairs of keys interleaved per query for vdpbf16ps; an odd last key pairs with p = 0.
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                              6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  for (int v = 0; v < kQVecs; ++v) {
    float* s = ws.s.data() + 16 * v;
    __m512 block_max = _mm512_set1_ps(kNegInf);
    __mmask16 nan = 0;
    for (int64_t j = 0; j < nk; ++j) {
      const __m512 x = _mm512_loadu_ps(s + j * kQBlock);
      nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
      block_max = _mm512_max_ps(x, block_max);  // NaN scores are skipped here and flagged instead
    }
    ws.nan[v] |= nan;
    const __m512 m_old = _mm512_load_ps(ws.m + 16 * v);
    const __m512 m_new = _mm512_max_ps(m_old, block_max);
    // While every key so far is masked (m_new = -inf) subtract 0 instead: p = exp(-inf) = 0, l and o stay 0.
    const __mmask16 dead = _mm512_cmp_ps_mask(m_new, _mm512_set1_ps(kNegInf), _CMP_EQ_OQ);
    const __m512 shift = _mm512_mask_mov_ps(m_new, dead, _mm512_setzero_ps());
    const __m512 corr = exp_nonpositive(_mm512_sub_ps(m_old, shift));
    __m512 sum = _mm512_setzero_ps();
    if (!c.bf16) {
      for (int64_t j = 0; j < nk; ++j) {
        const __m512 p = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(s + j * kQBlock), shift));
        sum = _mm512_add_ps(sum, p);
        _mm512_storeu_ps(s + j * kQBlock, p);
      }
    } else {
      for (int64_t j = 0; j < nk; j += 2) {
        const __m512 even = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(s + j * kQBlock), shift));
        sum = _mm512_add_ps(sum, even);
        __m512 odd = _mm512_setzero_ps();
        if (j + 1 < nk) {
          odd = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(s + (j + 1) * kQBlock), shift));
          sum = _mm512_add_ps(sum, odd);
        }
        const __m512i halves = vec::to_bf16_rne(odd, even);  // [even 0..15, odd 0..15]
        _mm512_storeu_si512(ws.p16.data() + ((j / 2) * kQBlock + 16 * v) * 2,
                            _mm512_permutexvar_epi16(interleave, halves));
      }
    }
    _mm512_store_ps(ws.m + 16 * v, m_new);
    _mm512_store_ps(ws.l + 16 * v, _mm512_fmadd_ps(_mm512_load_ps(ws.l + 16 * v), corr, sum));
    _mm512_store_ps(ws.corr + 16 * v, corr);
  }
}

void accumulate_pv(const Call& c, Workspace& ws, const HeadKV& kv, int64_t j0, int64_t nk) {
  for (int64_t c0 = 0; c0 < c.dim_v; c0 += 16 * kPVVecs) {
    const int64_t width = std::min<int64_t>(16 * kPVVecs, c.dim_v - c0);
    const int nv = static_cast<int>((width + 15) / 16);
    const int rem = static_cast<int>(width - 16 * (nv - 1));
    const auto tail = static_cast<__mmask16>(rem == 16 ? 0xffff : (1u << rem) - 1);
    dispatch_nv(nv, [&](auto nv_c) {
      constexpr int NV = decltype(nv_c)::value;
      for (int r0 = 0; r0 < kQBlock; r0 += kPVRows) {
        float* o = ws.o.data() + r0 * c.dv_pad + c0;
        if (!c.bf16) {
          pv_tile_f32<NV>(o, c.dv_pad, ws.corr + r0, ws.s.data() + r0,
                          reinterpret_cast<const float*>(kv.v) + j0 * kv.v_row + c0, kv.v_row, nk, tail);
        } else {
          (c.native_bf16
               ? pv_tile_bf16<NV, true>
               : pv_tile_bf16<NV, false>)(o, c.dv_pad, ws.corr + r0, ws.p16.data() + r0 * 2,
                                          reinterpret_cast<const uint16_t*>(kv.v) + (j0 / 2) * kv.v_row + c0 * 2,
                                          kv.v_row, (nk + 1) / 2);
        }
      }
    });
  }
}

void store_output(const Call& c, Workspace& ws, const Tensor& out, int64_t b, int64_t h, int64_t i0, int64_t nq) {
  const bool out_bf16 = out.dtype() == DType::BF16;
  for (int64_t i = 0; i < nq; ++i) {
    const bool nan = (ws.nan[i / 16] >> (i % 16)) & 1;
    const float l = ws.l[i];
    // denom 0 (every key masked) gives zeros, as the reference.
    const __m512 f =
        nan ? _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()) : _mm512_set1_ps(l > 0.0f ? 1.0f / l : 0.0f);
    const float* o = ws.o.data() + i * c.dv_pad;
    const int64_t row = ((b * c.heads_q + h) * c.len_q + i0 + i) * c.dim_v;
    for (int64_t d = 0; d < c.dim_v; d += 16) {
      const auto mask = static_cast<__mmask16>(c.dim_v - d >= 16 ? 0xffff : (1u << (c.dim_v - d)) - 1);
      const __m512 y = nan ? f : _mm512_mul_ps(_mm512_loadu_ps(o + d), f);
      if (out_bf16)
        _mm256_mask_storeu_epi16(out.data<uint16_t>() + row + d, mask, to_bf16_rne(y));
      else
        _mm512_mask_storeu_ps(out.data<float>() + row + d, mask, y);
    }
  }
}

void run_task(const Call& c, Workspace& ws, const Tensor& out, int64_t task) {
  const int64_t n_qblocks = (c.len_q + kQBlock - 1) / kQBlock;
  const int64_t qb = task % n_qblocks;
  const int64_t h = (task / n_qblocks) % c.heads_q;
  const int64_t b = task / (n_qblocks * c.heads_q);
  const int64_t i0 = qb * kQBlock, nq = std::min<int64_t>(kQBlock, c.len_q - i0);
  const HeadKV kv = prepare_head(c, ws, b, h / (c.heads_q / c.heads_kv));
  pack_q(c, ws, b, h, i0, nq);
  std::fill(std::begin(ws.m), std::end(ws.m), kNegInf);
  std::fill(std::begin(ws.l), std::end(ws.l), 0.0f);
  std::fill(ws.o.begin(), ws.o.end(), 0.0f);
  for (auto& n : ws.nan) n = 0;
  const int64_t n_keys = c.causal ? std::min(c.len_k, i0 + nq) : c.len_k;  // torch's is_causal: keys j <= i
  for (int64_t j0 = 0; j0 < n_keys; j0 += kKBlock) {
    const int64_t nk = std::min<int64_t>(kKBlock, n_keys - j0);
    scores(c, ws, kv, b, h, i0, nq, j0, nk);
    softmax_step(c, ws, nk);
    accumulate_pv(c, ws, kv, j0, nk);
  }
  store_output(c, ws, out, b, h, i0, nq);
}

}  // namespace

bool attention_avx512(const AttentionAttrs& attrs, Inputs in, const Tensor& out) {
  if (in.size() < 3 || in.size() > 4) return false;
  const DType dt = in[0].dtype();
  if ((dt != DType::F32 && dt != DType::BF16) || in[1].dtype() != dt || in[2].dtype() != dt) return false;
  if (in.size() == 4 && !dtype_is_float(in[3].dtype())) return false;
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::attention(attrs, metas);
  if (out.dtype() != expect.dtype || out.shape() != expect.shape || !out.is_contiguous()) return false;
  if (out.numel() == 0) return true;

  Call c;
  c.q = in[0], c.k = in[1], c.v = in[2];
  c.batch = c.q.dim(0), c.heads_q = c.q.dim(1), c.heads_kv = c.k.dim(1);
  c.len_q = c.q.dim(2), c.len_k = c.k.dim(2), c.dim = c.q.dim(3), c.dim_v = c.v.dim(3);
  if (c.len_q >= (int64_t{1} << 30) || c.len_k >= (int64_t{1} << 30)) return false;  // 32-bit causal indices
  if (in.size() == 4) c.mask = in[3].broadcast_to(Shape{c.batch, c.heads_q, c.len_q, c.len_k});
  c.dim_pairs = (c.dim + 1) / 2;
  c.dv_pad = (c.dim_v + 15) / 16 * 16;
  c.scale = attrs.scale > 0.0f ? attrs.scale : 1.0f / std::sqrt(static_cast<float>(c.dim));
  c.causal = attrs.causal;
  c.bf16 = dt == DType::BF16;
  c.native_bf16 = cpu_features().avx512_bf16;

  const int64_t n_tasks = c.batch * c.heads_q * ((c.len_q + kQBlock - 1) / kQBlock);
  parallel_for(n_tasks, 1, [&](int64_t begin, int64_t end) {
    Workspace ws;
    ws.qt.resize(static_cast<size_t>((c.bf16 ? c.dim_pairs : c.dim) * kQBlock));
    ws.s.resize(static_cast<size_t>(kKBlock * kQBlock));
    if (c.bf16) ws.p16.resize(static_cast<size_t>(kKBlock * kQBlock));
    ws.o.resize(static_cast<size_t>(kQBlock * c.dv_pad));
    for (int64_t t = begin; t < end; ++t) run_task(c, ws, out, t);
  });
  return true;
}

}  // namespace ltx::cpu::opt
