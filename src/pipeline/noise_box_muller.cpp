// The 16-wide Box-Muller block of torch's randn vector path, in both maths variants torch ships
// (aten/src/ATen/native/cpu/DistributionTemplates.h: normal_fill_16 and normal_fill_16_AVX2).
//
// The AVX2 variant is emulated lane by lane in portable scalar code. Its log and sincos are the Cephes single
// precision algorithms as avx_mathfun.h writes them with separate multiply and add intrinsics; GCC builds torch
// with -mfma and -ffp-contract=fast, so each multiply whose only use is an add or subtract becomes one fused
// multiply-add. std::fma below marks exactly those places; every other operation rounds to float on its own.
// This file must not be compiled with FP contraction of its own: the goldens (tests/noise) catch it if it is.
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "pipeline/noise.h"

namespace ltx::detail {
namespace {

// Cephes logf: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), log(m) by a degree-9 polynomial in m - 1, and e*ln2
// added in two parts (0.693359375 is exact with few bits, -2.12194440e-4 the rest). Only called with
// x in (0, 1] here: 1 - u for a uniform u on the 2^-24 grid, so always a normal, positive float.
float cephes_log(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f000000u);  // mantissa scaled into [0.5, 1)
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 0x7f) + 1.0f;
  // Below sqrt(1/2) take 2m - 1 = (m - 1) + m and one less in the exponent, to centre the polynomial on 1.
  const bool small = m < 0.707106781186547524f;
  float t = m - 1.0f;
  if (small) e -= 1.0f;
  t = t + (small ? m : 0.0f);
  const float z = t * t;

  float y = std::fma(7.0376836292e-2f, t, -1.1514610310e-1f);
  y = std::fma(y, t, 1.1676998740e-1f);
  y = std::fma(y, t, -1.2420140846e-1f);
  y = std::fma(y, t, 1.4249322787e-1f);
  y = std::fma(y, t, -1.6668057665e-1f);
  y = std::fma(y, t, 2.0000714765e-1f);
  y = std::fma(y, t, -2.4999993993e-1f);
  y = std::fma(y, t, 3.3333331174e-1f);
  y = y * t;
  // (y * z) + e * q1: the first multiply in statement order is the one fused into the add.
  y = std::fma(y, z, e * -2.12194440e-4f);
  y = std::fma(-z, 0.5f, y);
  const float r = t + y;
  return std::fma(e, 0.693359375f, r);
}

struct SinCos {
  float sin;
  float cos;
};

// Cephes sincosf for x >= 0 (an angle 2*pi*u): octant j from x * 4/pi rounded up to even, x reduced by j * pi/4
// in three parts (Cody-Waite), then the sine or cosine polynomial per octant with sign fixes.
SinCos cephes_sincos(float x) {
  const uint32_t sign_sin_in = std::bit_cast<uint32_t>(x) & 0x80000000u;
  x = std::fabs(x);
  int32_t j = static_cast<int32_t>(x * 1.27323954473516f);  // truncation, as _mm256_cvttps_epi32
  j = (j + 1) & ~1;
  const float y_oct = static_cast<float>(j);
  const uint32_t swap_sign_sin = static_cast<uint32_t>(j & 4) << 29;
  const bool poly_mask = (j & 2) == 0;  // octants where sin uses the sine polynomial
  const uint32_t sign_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  const uint32_t sign_sin = sign_sin_in ^ swap_sign_sin;

  x = std::fma(y_oct, -0.78515625f, x);
  x = std::fma(y_oct, -2.4187564849853515625e-4f, x);
  x = std::fma(y_oct, -3.77489497744594108e-8f, x);
  const float z = x * x;

  float yc = std::fma(2.443315711809948e-5f, z, -1.388731625493765e-3f);
  yc = std::fma(yc, z, 4.166664568298827e-2f);
  yc = yc * z;
  yc = std::fma(yc, z, -(z * 0.5f));  // (yc * z) - z * 0.5: again the first multiply is the fused one
  yc = yc + 1.0f;

  float ys = std::fma(-1.9515295891e-4f, z, 8.3321608736e-3f);
  ys = std::fma(ys, z, -1.6666654611e-1f);
  ys = ys * z;
  ys = std::fma(ys, x, x);

  // avx_mathfun selects with masks and adds: the unselected term is a +0, which only matters for a -0 result.
  const float sin_sel = poly_mask ? ys : 0.0f;
  const float cos_sel = poly_mask ? 0.0f : yc;
  const float s = cos_sel + sin_sel;
  const float c = (yc - cos_sel) + (ys - sin_sel);
  return {std::bit_cast<float>(std::bit_cast<uint32_t>(s) ^ sign_sin),
          std::bit_cast<float>(std::bit_cast<uint32_t>(c) ^ sign_cos)};
}

// normal_fill_16_AVX2: theta = float(2*pi) * u2 in float; the output goes through fmadd(n, std=1, mean=0).
void box_muller_16_avx2(float* data) {
  constexpr float kTwoPi = static_cast<float>(2.0 * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_log(u1));
    const SinCos sc = cephes_sincos(kTwoPi * u2);
    data[j] = radius * sc.cos + 0.0f;
    data[j + 8] = radius * sc.sin + 0.0f;
  }
}

// normal_fill_16: libm logf/cosf/sinf in float, but theta is 2*pi*u2 computed in double, then rounded.
void box_muller_16_scalar(float* data) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * std::log(u1));
    const auto theta = static_cast<float>(2.0 * std::numbers::pi * static_cast<double>(u2));
    data[j] = radius * std::cos(theta) * 1.0f + 0.0f;
    data[j + 8] = radius * std::sin(theta) * 1.0f + 0.0f;
  }
}

}  // namespace

void box_muller_16(float* data, RandnMath math) {
  if (math == RandnMath::Avx2) {
    box_muller_16_avx2(data);
  } else {
    box_muller_16_scalar(data);
  }
}

}  // namespace ltx::detail
