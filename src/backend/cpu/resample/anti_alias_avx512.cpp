// AntiAliasSnakeBeta (resample_ref.cpp has the step-by-step reference) in one pass per (b, c) row, nothing
// materialized but three row buffers per thread:
//   1. the row in f32 with its replicate padding written around it;
//   2. both phases of the ×2 upsample (out[2i] and out[2i+1] are each an Ku/2-tap FIR of the padded row: the
//      transposed conv's zero-stuffed taps skipped), times 2, then SnakeBeta with the 16-lane vec::sin, stored
//      de-interleaved (even and odd positions of the downsampler's replicate-padded input, edges filled after);
//   3. the stride-2 low-pass as Kd/2 taps on each of the two de-interleaved rows: contiguous loads only.
// Taps are summed in the reference's order with fused multiply-adds; sin is vec::sin (a few ulp), so results
// agree with the reference to f32 rounding, not bit for bit: the vocoder uses this op in production precision only
// (nn/precision.h), validation keeps the op-by-op graph.
// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/padding.h"
#include "backend/cpu/resample/anti_alias_opt.h"
#include "backend/cpu/vec_avx512.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

struct Tap {
  int64_t dx;  // input offset from i
  float w;
};

void load_row(const Tensor& x, int64_t b, int64_t c, float* dst) {
  const int64_t n = x.dim(2);
  if (x.dtype() == DType::F32) {
    const float* src = x.data<float>() + (b * x.strides()[0] + c * x.strides()[1]);
    std::copy(src, src + n, dst);
    return;
  }
  const auto* src = reinterpret_cast<const uint16_t*>(x.raw()) + (b * x.strides()[0] + c * x.strides()[1]);
  int64_t i = 0;
  for (; i < n; i += 16) vec::store_f32(dst + i, vec::load_bf16(src + i, vec::tail_mask(n - i)), vec::tail_mask(n - i));
}

}  // namespace

bool try_anti_alias_snake_beta(const SnakeAttrs& a, Inputs in, const Tensor& out) {
  if (!gemm::avx512_available() || in.size() != 5) return false;
  const Tensor& x = in[0];
  const auto ok = [](DType d) { return d == DType::F32 || d == DType::BF16; };
  if (!ok(x.dtype()) || !ok(out.dtype()) || !out.is_contiguous() || x.rank() != 3 || x.strides()[2] != 1) return false;
  const std::vector<float> up = in[3].to_floats(), down = in[4].to_floats();
  const int64_t ku = static_cast<int64_t>(up.size()), kd = static_cast<int64_t>(down.size());
  const int64_t batch = x.dim(0), chans = x.dim(1), len = x.dim(2);
  const int64_t pad = ku / 2 - 1, crop_l = 2 * pad + (ku - 2) / 2, dl = kd / 2 - 1;
  // Phase r: out[2i + r] = Σ_e xpad[i + e]·up[r + crop_l − 2e] over the e that keep the tap in range.
  std::vector<Tap> phase[2];
  int64_t lo = 0, hi = 0;
  for (int r = 0; r < 2; ++r)
    for (int64_t e = 0; 2 * e <= r + crop_l; ++e) {
      const int64_t tap = r + crop_l - 2 * e;
      if (tap >= ku) continue;
      phase[r].push_back({e - pad, up[static_cast<size_t>(tap)]});
      lo = std::min(lo, e - pad);
      hi = std::max(hi, e - pad);
    }
  const int64_t margin_l = -lo, xlen = len + margin_l + hi;
  // De-interleaved downsampler input: ev[j] = s[2j − dl], od[j] = s[2j + 1 − dl] (s clamped to [0, 2L)), with
  // s[2i] = A_even[i] and s[2i+1] = A_odd[i]; dl odd: ev holds A_odd shifted by (dl+1)/2, od A_even by (dl−1)/2.
  const int64_t hl = kd / 2, dlen = len + hl - 1;
  const bool dl_odd = dl % 2 != 0;
  const int64_t shift_even = dl_odd ? (dl - 1) / 2 : dl / 2, shift_odd = dl_odd ? (dl + 1) / 2 : dl / 2;
  const int64_t oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));

  parallel_for(batch * chans, 1, [&](int64_t begin, int64_t end) {
    // Per-thread row buffers kept between calls (grow-only): fresh ones cost page faults and zeroing every call.
    thread_local std::vector<float> xq, ev, od;
    if (xq.size() < static_cast<size_t>(xlen + 16)) xq.resize(static_cast<size_t>(xlen + 16));
    if (ev.size() < static_cast<size_t>(dlen + 16)) ev.resize(static_cast<size_t>(dlen + 16));
    if (od.size() < static_cast<size_t>(dlen + 16)) od.resize(static_cast<size_t>(dlen + 16));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / chans, c = row % chans;
      const auto param = [&](const Tensor& p) {
        const float v = load_as_f32(p.raw() + element_byte_offset(p, &c), p.dtype());
        return a.log_scale ? std::exp(v) : v;
      };
      const float alpha = param(in[1]), inv_beta = 1.0f / (param(in[2]) + 1e-9f);
      float* body = xq.data() + margin_l;
      load_row(x, b, c, body);
      for (int64_t i = 1; i <= margin_l; ++i) body[-i] = body[0];
      for (int64_t i = 0; i < hi; ++i) body[len + i] = body[len - 1];
      // A_even → (dl odd ? od : ev) at shift_even, A_odd → (dl odd ? ev : od) at shift_odd.
      float* dst_even = (dl_odd ? od.data() : ev.data()) + shift_even;
      float* dst_odd = (dl_odd ? ev.data() : od.data()) + shift_odd;
      const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(inv_beta), two = _mm512_set1_ps(2.0f);
      for (int64_t i = 0; i < len; i += 16) {
        const __mmask16 m = vec::tail_mask(len - i);
        for (int r = 0; r < 2; ++r) {
          __m512 acc = _mm512_setzero_ps();
          for (const Tap& t : phase[r])
            acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, body + i + t.dx), _mm512_set1_ps(t.w), acc);
          const __m512 u = _mm512_mul_ps(two, acc);
          const __m512 sn = vec::sin(_mm512_mul_ps(u, va));
          const __m512 v = _mm512_add_ps(u, _mm512_mul_ps(vb, _mm512_mul_ps(sn, sn)));
          _mm512_mask_storeu_ps((r == 0 ? dst_even : dst_odd) + i, m, v);
        }
      }
      // Replicate edges of s: below 0 → s[0] = A_even[0], past 2L − 1 → s[2L − 1] = A_odd[L − 1].
      const float first = dst_even[0], last = dst_odd[len - 1];
      const auto fill_edges = [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          if (2 * j - dl < 0) ev[static_cast<size_t>(j)] = first;
          if (2 * j - dl > 2 * len - 1) ev[static_cast<size_t>(j)] = last;
          if (2 * j + 1 - dl < 0) od[static_cast<size_t>(j)] = first;
          if (2 * j + 1 - dl > 2 * len - 1) od[static_cast<size_t>(j)] = last;
        }
      };
      fill_edges(0, std::min(dlen, hl));
      fill_edges(std::max(hl, len - 1), dlen);
      std::byte* orow = out.raw() + row * len * oes;
      for (int64_t i = 0; i < len; i += 16) {
        const __mmask16 m = vec::tail_mask(len - i);
        __m512 acc = _mm512_setzero_ps();
        for (int64_t k = 0; k < hl; ++k) {
          acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, ev.data() + i + k),
                                _mm512_set1_ps(down[static_cast<size_t>(2 * k)]), acc);
          acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, od.data() + i + k),
                                _mm512_set1_ps(down[static_cast<size_t>(2 * k + 1)]), acc);
        }
        if (out.dtype() == DType::F32)
          vec::store_f32(reinterpret_cast<float*>(orow) + i, acc, m);
        else
          vec::store_bf16(reinterpret_cast<uint16_t*>(orow) + i, acc, m);
      }
    }
  });
  return true;
}

bool vec_sin_for_testing(const float* x, float* y, int64_t n) {
  if (!gemm::avx512_available()) return false;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = vec::tail_mask(n - i);
    vec::store_f32(y + i, vec::sin(vec::load_f32(x + i, m)), m);
  }
  return true;
}

bool vec_cos_for_testing(const float* x, float* y, int64_t n) {
  if (!gemm::avx512_available()) return false;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = vec::tail_mask(n - i);
    vec::store_f32(y + i, vec::cos(vec::load_f32(x + i, m)), m);
  }
  return true;
}

}  // namespace ltx::cpu::opt
