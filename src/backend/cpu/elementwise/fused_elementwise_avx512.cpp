// Vector forms of the fused program's instructions (fused_elementwise.h). Formulas as elementwise_ref.cpp, with
// separate multiplies and adds (vec::mul_rn/add_rn, never contracted to FMA) wherever the reference rounds twice,
// so exact ops keep its bits.
#include <variant>

#include "backend/cpu/elementwise/fused_elementwise.h"
#include "backend/cpu/vec_avx512.h"

namespace ltx::cpu::fused {
namespace {

template <typename F>
void map(const float* a, float* r, int64_t n, F&& f) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = vec::tail_mask(n - i);
    vec::store_f32(r + i, f(vec::load_f32(a + i, m)), m);
  }
}

template <typename F>
void map2(const float* a, const float* b, float* r, int64_t n, F&& f) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = vec::tail_mask(n - i);
    vec::store_f32(r + i, f(vec::load_f32(a + i, m), vec::load_f32(b + i, m)), m);
  }
}

// x / (1 + e^(-y)): silu (y = x), and gelu_tanh (y = 2u), since 0.5·x·(1 + tanh(u)) = x / (1 + e^(-2u)).
// With e = e^(-|y|) in (0, 1], never overflowing: x / (1 + e) for y >= 0, x·e / (1 + e) for y < 0, the latter
// formed with e·2^24 and scaled back at the end, so results near and below f32's smallest normal keep precision.
inline __m512 over_one_plus_exp_neg(__m512 x, __m512 y) {
  const __m512 minus_abs_y = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(y));
  const __m512 den = _mm512_add_ps(_mm512_set1_ps(1.0f), vec::exp(minus_abs_y));
  const __mmask16 neg = _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_LT_OQ);
  if (neg == 0) return _mm512_div_ps(x, den);
  const __m512 scaled = _mm512_mask_mul_ps(x, neg, x, vec::exp(minus_abs_y, 24));
  const __m512 q = _mm512_div_ps(scaled, den);
  return _mm512_mask_scalef_ps(q, neg, q, _mm512_set1_ps(-24.0f));
}

}  // namespace

bool eval_avx512(const FusedInstr& ins, const float* a, const float* b, const float* c, float* r, int64_t n,
                 bool approximate) {
  switch (ins.kind) {
    case OpKind::Add:
      map2(a, b, r, n, [](__m512 x, __m512 y) { return vec::add_rn(x, y); });
      return true;
    case OpKind::Sub:
      map2(a, b, r, n, [](__m512 x, __m512 y) { return vec::sub_rn(x, y); });
      return true;
    case OpKind::Mul:
      map2(a, b, r, n, [](__m512 x, __m512 y) { return vec::mul_rn(x, y); });
      return true;
    case OpKind::Div:
      map2(a, b, r, n, [](__m512 x, __m512 y) { return _mm512_div_ps(x, y); });
      return true;
    case OpKind::Lerp:
      for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = vec::tail_mask(n - i);
        const __m512 x = vec::load_f32(a + i, m), y = vec::load_f32(b + i, m), t = vec::load_f32(c + i, m);
        vec::store_f32(r + i, vec::add_rn(x, vec::mul_rn(t, vec::sub_rn(y, x))), m);
      }
      return true;
    case OpKind::Scale: {
      const auto& s = std::get<ScaleAttrs>(ins.attrs);
      const __m512 k = _mm512_set1_ps(s.scale), o = _mm512_set1_ps(s.bias);
      map(a, r, n, [&](__m512 x) { return vec::add_rn(vec::mul_rn(x, k), o); });
      return true;
    }
    case OpKind::Clamp: {
      // std::min(std::max(x, lo), hi): NaN passes through, as with vmaxps/vminps taking x second.
      const auto& s = std::get<ClampAttrs>(ins.attrs);
      const __m512 lo = _mm512_set1_ps(s.lo), hi = _mm512_set1_ps(s.hi);
      map(a, r, n, [&](__m512 x) { return _mm512_min_ps(hi, _mm512_max_ps(lo, x)); });
      return true;
    }
    case OpKind::LeakyRelu: {
      const __m512 slope = _mm512_set1_ps(std::get<LeakyReluAttrs>(ins.attrs).slope);
      map(a, r, n, [&](__m512 x) {
        const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NGE_UQ);  // !(x >= 0), NaN included
        return _mm512_mask_mul_round_ps(x, neg, x, slope, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      });
      return true;
    }
    case OpKind::Silu:
      if (!approximate) return false;
      map(a, r, n, [](__m512 x) { return over_one_plus_exp_neg(x, x); });
      return true;
    case OpKind::Sigmoid:
      if (!approximate) return false;
      map(a, r, n, [](__m512 x) { return over_one_plus_exp_neg(_mm512_set1_ps(1.0f), x); });
      return true;
    case OpKind::GeluTanh:
      if (!approximate) return false;
      map(a, r, n, [](__m512 x) {
        // u = sqrt(2/π)·(x + 0.044715·x³) (gelu_approx.py), y = 2u.
        const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
        const __m512 u = _mm512_mul_ps(_mm512_set1_ps(0.79788456080286536f),
                                       _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(0.044715f), x3)));
        return over_one_plus_exp_neg(x, _mm512_add_ps(u, u));
      });
      return true;
    default:
      return false;
  }
}

void load_bf16_avx512(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = vec::tail_mask(n - i);
    vec::store_f32(dst + i, vec::load_bf16(src + i, m), m);
  }
}

void store_bf16_avx512(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = vec::tail_mask(n - i);
    vec::store_bf16(dst + i, vec::load_f32(src + i, m), m);
  }
}

}  // namespace ltx::cpu::fused
