// AVX-512 helpers shared by the *_avx512.cpp kernels: bf16 <-> f32 conversion with the exact bits of core/half.h,
// the bf16 pair dot product with or without AVX512_BF16, masked loads/stores of f32/bf16 rows, and exp on 16 lanes.
// Include only from files compiled for AVX-512; run only where cpu_features().avx512 holds (AVX512_BF16 is not
// needed but by dpbf16<true>).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace ltx::cpu::vec {

// f32 -> bf16 bits, round to nearest even with NaN kept quiet: the same bits as f32_to_bf16 (core/half.h).
inline __m256i to_bf16_rne(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

// Two vectors as 32 bf16 values, lo in elements 0-15 and hi in 16-31: vcvtne2ps2bf16(hi, lo) in AVX-512F, with the
// bits of to_bf16_rne (the instruction also flushes f32 subnormals to zero; these keep them, as torch does).
inline __m512i to_bf16_rne(__m512 hi, __m512 lo) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(to_bf16_rne(lo)), to_bf16_rne(hi), 1);
}

// vdpbf16ps: acc + a.odd·b.odd + a.even·b.even per 32-bit lane, a and b holding bf16 pairs. Native needs
// AVX512_BF16; the emulation (AVX-512F) widens each half exactly and adds the products in the instruction's order
// with one rounding each, as it does (bf16·bf16 products are exact in f32), so the sums are the same bits but for
// the instruction's flush of subnormals. Kernels take Native as a template parameter, chosen per call from
// cpu_features().avx512_bf16.
template <bool Native>
inline __m512 dpbf16(__m512 acc, __m512i a, __m512i b) {
  if constexpr (Native) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
  } else {
    const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
    acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, high)),
                          _mm512_castsi512_ps(_mm512_and_si512(b, high)), acc);
    return _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(b, 16)),
                           acc);
  }
}

inline __mmask16 tail_mask(int64_t n) { return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1u); }

// Up to 16 values (lanes past n are 0) from f32 or bf16 memory.
inline __m512 load_f32(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
inline __m512 load_bf16(const uint16_t* p, __mmask16 m) {
  const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
inline void store_f32(float* p, __m512 v, __mmask16 m) { _mm512_mask_storeu_ps(p, m, v); }
inline void store_bf16(uint16_t* p, __m512 v, __mmask16 m) { _mm256_mask_storeu_epi16(p, m, to_bf16_rne(v)); }

// e^x for every f32 x: 2^n·e^r with n = round(x·log2 e), |r| <= ln2/2, e^r by its Taylor series to r^7
// (truncation < 6e-9 relative); 2^n applied by vscalefps, which gives +inf past 88.7, gradual underflow to 0 below
// -87.3 and NaN for NaN. Arguments are clamped to [-200, 100] first. Measured max error against double-precision exp:
// see ElementwiseFast tests.
inline __m512 exp(__m512 x, int pow2 = 0);

// Products and sums with the rounding spelled out, which GCC never contracts into an FMA (it may contract plain
// _mm512_mul_ps + _mm512_add_ps under -mfma), for kernels that must reproduce a reference's separate roundings.
inline __m512 mul_rn(__m512 a, __m512 b) {
  return _mm512_mul_round_ps(a, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline __m512 add_rn(__m512 a, __m512 b) {
  return _mm512_add_round_ps(a, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
inline __m512 sub_rn(__m512 a, __m512 b) {
  return _mm512_sub_round_ps(a, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// e^x = 2^n · e^r with n = round(x·log2 e) and |r| <= ln2/2; returns e^r (Taylor series to r^7, truncation < 6e-9
// relative) and sets *n. x must keep |n| < 2^12 (the callers clamp it first).
inline __m512 exp_split(__m512 x, __m512* n_out) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln2 split so that n·ln2_hi is exact for |n| < 2^12.
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  *n_out = n;
  return p;
}

// e^x · 2^pow2 (pow2 lets a caller keep e^x's precision where e^x alone would be subnormal).
inline __m512 exp(__m512 x, int pow2) {
  x = _mm512_min_ps(_mm512_set1_ps(100.0f), x);   // n stays in range for vscalefps; NaN (second operand) passes
  x = _mm512_max_ps(_mm512_set1_ps(-200.0f), x);  // e^-200·2^pow2 is still 0 for pow2 <= 100
  __m512 n;
  const __m512 p = exp_split(x, &n);
  return _mm512_scalef_ps(p, _mm512_add_ps(n, _mm512_set1_ps(static_cast<float>(pow2))));
}

// sin x and cos x on 16 lanes: x reduced by multiples of π/2 (q = round(x·2/π), r = x − q·π/2 with π/2 split in
// three floats: x − q·c1 is exact, the other two parts fold in with one rounding each), then Taylor polynomials on
// |r| <= π/4 (sin to r^11, cos to r^12; truncation below 2e-10) picked and signed by q mod 4. Accurate to a few ulp for
// |x| < 2^22 (tested against double-precision sin/cos: see VecSin tests); lanes beyond that, infinities and NaN go
// through std::sin/std::cos one lane at a time.
inline void sincos_reduced(__m512 x, __m512* r_out, __m512i* q_out) {
  const __m512 q = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.636619772367581343f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(q, _mm512_set1_ps(1.57079637050628662109375f), x);
  r = _mm512_fnmadd_ps(q, _mm512_set1_ps(-4.371138828673793e-08f), r);
  r = _mm512_fnmadd_ps(q, _mm512_set1_ps(-1.7151245100058819e-15f), r);
  *r_out = r;
  *q_out = _mm512_cvtps_epi32(q);
}
inline __m512 sin_poly(__m512 r, __m512 r2) {  // r − r³/3! + … − r^11/11!
  __m512 p = _mm512_set1_ps(-2.50521083854417188e-08f);
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(2.75573192239858907e-06f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-1.98412698412698413e-04f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(8.33333333333333333e-03f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-1.66666666666666667e-01f));
  return _mm512_fmadd_ps(_mm512_mul_ps(p, r2), r, r);
}
inline __m512 cos_poly(__m512 r2) {  // 1 − r²/2! + … + r^12/12!
  __m512 p = _mm512_set1_ps(2.08767569878680990e-09f);
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-2.75573192239858907e-07f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(2.48015873015873016e-05f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-1.38888888888888889e-03f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(4.16666666666666667e-02f));
  p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-0.5f));
  return _mm512_fmadd_ps(p, r2, _mm512_set1_ps(1.0f));
}
template <typename Scalar>
inline __m512 sincos_wide_lanes(__m512 x, __m512 v, Scalar scalar) {
  const __mmask16 wide = _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(4194304.0f), _CMP_NLT_UQ);
  if (wide == 0) return v;
  alignas(64) float xs[16], vs[16];
  _mm512_store_ps(xs, x);
  _mm512_store_ps(vs, v);
  for (int i = 0; i < 16; ++i)
    if ((wide >> i) & 1) vs[i] = scalar(xs[i]);
  return _mm512_load_ps(vs);
}
inline __m512 sin(__m512 x) {
  __m512 r;
  __m512i q;
  sincos_reduced(x, &r, &q);
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __mmask16 odd = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
  const __mmask16 neg = _mm512_test_epi32_mask(q, _mm512_set1_epi32(2));
  __m512 v = _mm512_mask_blend_ps(odd, sin_poly(r, r2), cos_poly(r2));
  v = _mm512_mask_sub_ps(v, neg, _mm512_setzero_ps(), v);
  return sincos_wide_lanes(x, v, [](float a) { return std::sin(a); });
}
inline __m512 cos(__m512 x) {
  __m512 r;
  __m512i q;
  sincos_reduced(x, &r, &q);
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __mmask16 odd = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
  const __mmask16 neg = _mm512_test_epi32_mask(_mm512_add_epi32(q, _mm512_set1_epi32(1)), _mm512_set1_epi32(2));
  __m512 v = _mm512_mask_blend_ps(odd, cos_poly(r2), sin_poly(r, r2));
  v = _mm512_mask_sub_ps(v, neg, _mm512_setzero_ps(), v);
  return sincos_wide_lanes(x, v, [](float a) { return std::cos(a); });
}

}  // namespace ltx::cpu::vec
