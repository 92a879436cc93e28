#include "core/float8.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "core/half.h"

namespace ltx {
namespace {

// E4M3FN: value = (-1)^s · 2^(e-7) · (1 + m/8), subnormal (e = 0) 2^-6 · m/8; e = 15 with m = 7 is NaN.
float decode_e4m3(uint8_t v) {
  const int sign = v >> 7, exponent = (v >> 3) & 0xF, mantissa = v & 0x7;
  float magnitude;
  if (exponent == 0xF && mantissa == 0x7)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa) / 8.0f, -6);
  else
    magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return sign ? -magnitude : magnitude;
}

template <float (*decode)(uint8_t)>
std::array<float, 256> make_table() {
  std::array<float, 256> t{};
  for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = decode(static_cast<uint8_t>(i));
  return t;
}

float decode_e5m2(uint8_t v) { return f16_to_f32(static_cast<uint16_t>(v << 8)); }

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> t = make_table<decode_e4m3>();
  return t;
}
const std::array<float, 256>& e5m2_table() {
  static const std::array<float, 256> t = make_table<decode_e5m2>();
  return t;
}

}  // namespace

float f8_e4m3_to_f32(uint8_t v) { return e4m3_table()[v]; }
float f8_e5m2_to_f32(uint8_t v) { return e5m2_table()[v]; }

uint8_t f32_to_f8_e4m3(float v) {
  const auto bits = std::bit_cast<uint32_t>(v);
  const auto sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7F;  // NaN
  const auto a = std::bit_cast<float>(abs_bits);
  if (a >= 448.0f) return sign | 0x7E;  // saturate to the largest finite value
  if (a < 0.015625f) {
    // Below 2^-6 the representable values are the multiples of 2^-9 (subnormals): round a·2^9 to an integer,
    // ties to even; 8 lands exactly on the smallest normal, 0x08. The scaling and the remainder are exact.
    const float scaled = a * 512.0f;
    auto m = static_cast<uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return sign | static_cast<uint8_t>(m);
  }
  // Normal: keep 3 of f32's 23 mantissa bits, ties to even (a carry into the exponent is the right result), then
  // rebias the exponent from 127 to 7. a < 448 rounds to at most 448, so no overflow is possible here.
  const uint32_t r = abs_bits + 0x7FFFFu + ((abs_bits >> 20) & 1u);
  const uint32_t exponent = (r >> 23) - 120u, mantissa = (r >> 20) & 0x7u;
  return sign | static_cast<uint8_t>(exponent << 3 | mantissa);
}

void quantize_f8_e4m3(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_f8_e4m3(src[i]);
}

void dequantize_f8_e4m3(const uint8_t* src, float* dst, int64_t n) {
  const auto& t = e4m3_table();
  for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}

void dequantize_f8_e5m2(const uint8_t* src, float* dst, int64_t n) {
  const auto& t = e5m2_table();
  for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}

}  // namespace ltx
