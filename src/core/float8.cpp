#include "core/float8.h"

#include <array>
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

void dequantize_f8_e4m3(const uint8_t* src, float* dst, int64_t n) {
  const auto& t = e4m3_table();
  for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}

void dequantize_f8_e5m2(const uint8_t* src, float* dst, int64_t n) {
  const auto& t = e5m2_table();
  for (int64_t i = 0; i < n; ++i) dst[i] = t[src[i]];
}

}  // namespace ltx
