// GGUF block formats. Layouts and dequantization formulas follow gguf-py's numpy reference
// (gguf/quants.py, classes Q8_0, Q4_0, Q4_K, Q5_K, Q6_K; gguf 0.19.0), which mirrors ggml's block_* structs.
//
// Dequantization is bit-exact with gguf-py: each product is rounded to f32 in the same order as numpy
// evaluates it. That relies on the compiler not contracting a*b-c into an FMA, which holds because the build
// uses ISO C++ mode (-std=c++20 implies -ffp-contract=off in GCC) and these files get no -mfma.
#include "core/quant.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "core/float8.h"
#include "core/half.h"

namespace ltx {
namespace {

constexpr int kQK0 = 32;   // elements per Q8_0 / Q4_0 block
constexpr int kQKK = 256;  // elements per K super-block

inline float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

inline void store_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Stores a block's f16 scale. One past f16's range would make the whole block inf/NaN when read back
// (gguf-py writes it anyway); we refuse instead, since such values have no representation in the format.
inline void store_scale(uint8_t* p, float v) {
  store_f16(p, v);
  LTX_CHECK(std::isfinite(load_f16(p)), "quant", "block scale ", v, " overflows f16: values too large to quantize");
}

// ---- Q8_0: [f16 d][32 x int8]; x = q * d. --------------------------------------------------------------

void dequantize_q8_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const auto* q = reinterpret_cast<const int8_t*>(b + 2);
  for (int i = 0; i < kQK0; ++i) y[i] = static_cast<float>(q[i]) * d;
}

// gguf-py Q8_0.quantize_blocks: d = amax / 127, q = round-half-away(x / d) (np_roundf), d stored as f16.
void quantize_q8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int i = 0; i < kQK0; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  store_scale(b, d);
  auto* q = reinterpret_cast<int8_t*>(b + 2);
  for (int i = 0; i < kQK0; ++i) q[i] = static_cast<int8_t>(std::round(x[i] * id));
}

// ---- Q4_0: [f16 d][16 bytes]; element i < 16 is the low nibble of byte i, element 16 + i the high one. ----

void dequantize_q4_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const uint8_t* qs = b + 2;
  for (int i = 0; i < kQK0 / 2; ++i) {
    y[i] = d * static_cast<float>((qs[i] & 0x0F) - 8);
    y[i + kQK0 / 2] = d * static_cast<float>((qs[i] >> 4) - 8);
  }
}

// gguf-py Q4_0.quantize_blocks: the signed value of largest magnitude (first one on ties) maps to -8,
// so d = max / -8 and q = min(15, trunc(x / d + 8.5)).
void quantize_q4_0(const float* x, uint8_t* b) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < kQK0; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  const float d = max / -8.0f;
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  store_scale(b, d);
  uint8_t* qs = b + 2;
  for (int i = 0; i < kQK0 / 2; ++i) {
    const int lo = std::min(15, static_cast<int>(std::trunc(x[i] * id + 8.5f)));
    const int hi = std::min(15, static_cast<int>(std::trunc(x[i + kQK0 / 2] * id + 8.5f)));
    qs[i] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// ---- Q5_0: [f16 d][4 bytes qh][16 bytes qs]; element i < 16 is the low nibble of qs[i] with bit i of qh as
// its bit 4, element 16 + i the high nibble with bit 16 + i; value (q - 16)·d (gguf-py Q5_0.dequantize_blocks). ----

void dequantize_q5_0(const uint8_t* b, float* y) {
  const float d = load_f16(b);
  const uint32_t qh = static_cast<uint32_t>(b[2]) | (static_cast<uint32_t>(b[3]) << 8) |
                      (static_cast<uint32_t>(b[4]) << 16) | (static_cast<uint32_t>(b[5]) << 24);
  const uint8_t* qs = b + 6;
  for (int i = 0; i < kQK0 / 2; ++i) {
    const int lo = (qs[i] & 0x0F) | static_cast<int>(((qh >> i) & 1u) << 4);
    const int hi = (qs[i] >> 4) | static_cast<int>(((qh >> (i + kQK0 / 2)) & 1u) << 4);
    y[i] = d * static_cast<float>(lo - 16);
    y[i + kQK0 / 2] = d * static_cast<float>(hi - 16);
  }
}

// gguf-py Q5_0.quantize_blocks: as Q4_0 with 32 levels, d = max / -16 and q = min(31, trunc(x / d + 16.5)).
void quantize_q5_0(const float* x, uint8_t* b) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < kQK0; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  const float d = max / -16.0f;
  const float id = d == 0.0f ? 0.0f : 1.0f / d;
  store_scale(b, d);
  uint32_t qh = 0;
  uint8_t* qs = b + 6;
  for (int i = 0; i < kQK0 / 2; ++i) {
    const int lo = std::min(31, static_cast<int>(std::trunc(x[i] * id + 16.5f)));
    const int hi = std::min(31, static_cast<int>(std::trunc(x[i + kQK0 / 2] * id + 16.5f)));
    qs[i] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
    qh |= static_cast<uint32_t>(lo >> 4) << i;
    qh |= static_cast<uint32_t>(hi >> 4) << (i + kQK0 / 2);
  }
  for (int k = 0; k < 4; ++k) b[2 + k] = static_cast<uint8_t>(qh >> (8 * k));
}

// ---- Q4_K / Q5_K shared parts -------------------------------------------------------------------------
// Super-block of 8 sub-blocks of 32; sub-block j is x = (d * sc[j]) * q - dmin * m[j] with 6-bit sc, m.
// The 12 scale bytes pack them as (gguf-py Q4_K.get_scale_min):
//   bytes 0-3: sc[0..3] in bits 0-5, bits 6-7 are bits 4-5 of sc[4..7]
//   bytes 4-7: m[0..3]  in bits 0-5, bits 6-7 are bits 4-5 of m[4..7]
//   bytes 8-11: low nibble = bits 0-3 of sc[4..7], high nibble = bits 0-3 of m[4..7]

constexpr int kScaleBytes = 12;

struct ScalesMins {
  uint8_t sc[8];
  uint8_t m[8];
};

ScalesMins unpack_scales_mins(const uint8_t* s) {
  ScalesMins r{};
  uint8_t* sc = r.sc;
  uint8_t* m = r.m;
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 0x3F;
    m[j] = s[j + 4] & 0x3F;
    sc[j + 4] = static_cast<uint8_t>((s[j + 8] & 0x0F) | ((s[j] >> 2) & 0x30));
    m[j + 4] = static_cast<uint8_t>((s[j + 8] >> 4) | ((s[j + 4] >> 2) & 0x30));
  }
  return r;
}

void pack_scales_mins(const ScalesMins& r, uint8_t* s) {
  const uint8_t* sc = r.sc;
  const uint8_t* m = r.m;
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0x0F) | ((m[j + 4] & 0x0F) << 4));
  }
}

// Simple asymmetric quantizer for Q4_K / Q5_K, far simpler than llama.cpp's search-based
// make_qkx2_quants: each sub-block's range [min(x, 0), max(x)] becomes scale = range / qmax and
// min = -min(x, 0) >= 0; both are quantized to 6 bits against the super-block's f16 d and dmin, and each
// element to round((x + min) / scale) in [0, qmax]. Good enough to make valid test weights.
// Writes d, dmin and the scales into the block and returns the quants, one per element.
std::array<uint8_t, kQKK> quantize_k_asymmetric(const float* x, int qmax, uint8_t* block) {
  std::array<uint8_t, kQKK> q{};
  uint8_t* dm_out = block;
  constexpr int kSub = 8, kLen = 32;
  float scale[kSub], minv[kSub];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kSub; ++j) {
    float lo = 0.0f, hi = 0.0f;
    for (int i = 0; i < kLen; ++i) {
      lo = std::min(lo, x[j * kLen + i]);
      hi = std::max(hi, x[j * kLen + i]);
    }
    scale[j] = (hi - lo) / static_cast<float>(qmax);
    minv[j] = -lo;
    max_scale = std::max(max_scale, scale[j]);
    max_min = std::max(max_min, minv[j]);
  }
  store_scale(dm_out, max_scale / 63.0f);
  store_scale(dm_out + 2, max_min / 63.0f);
  const float d = load_f16(dm_out), dmin = load_f16(dm_out + 2);  // the values dequantization will see
  ScalesMins packed{};
  uint8_t* sc = packed.sc;
  uint8_t* m = packed.m;
  for (int j = 0; j < kSub; ++j) {
    sc[j] = d > 0.0f ? static_cast<uint8_t>(std::min(63.0f, std::round(scale[j] / d))) : 0;
    // Round the min up so the sub-block's most negative value stays inside the representable range.
    m[j] = dmin > 0.0f ? static_cast<uint8_t>(std::min(63.0f, std::ceil(minv[j] / dmin))) : 0;
    const float ds = d * static_cast<float>(sc[j]);
    const float dm = dmin * static_cast<float>(m[j]);
    const float ids = ds > 0.0f ? 1.0f / ds : 0.0f;
    for (int i = 0; i < kLen; ++i) {
      const float v = std::round((x[j * kLen + i] + dm) * ids);
      q[j * kLen + i] = static_cast<uint8_t>(std::clamp(v, 0.0f, static_cast<float>(qmax)));
    }
  }
  pack_scales_mins(packed, block + 4);
  return q;
}

// ---- Q4_K: [f16 d][f16 dmin][12 scale bytes][128 bytes]; sub-blocks 2g and 2g+1 are the low and high
// nibbles of bytes 32g..32g+31. ---------------------------------------------------------------------------

void dequantize_q4_k(const uint8_t* b, float* y) {
  const float d = load_f16(b), dmin = load_f16(b + 2);
  const ScalesMins u = unpack_scales_mins(b + 4);
  const uint8_t* sc = u.sc;
  const uint8_t* m = u.m;
  const uint8_t* qs = b + 4 + kScaleBytes;
  for (ptrdiff_t g = 0; g < 4; ++g) {
    const float ds_lo = d * static_cast<float>(sc[2 * g]), dm_lo = dmin * static_cast<float>(m[2 * g]);
    const float ds_hi = d * static_cast<float>(sc[2 * g + 1]), dm_hi = dmin * static_cast<float>(m[2 * g + 1]);
    float* out = y + 64 * g;
    const uint8_t* in = qs + 32 * g;
    for (int i = 0; i < 32; ++i) {
      out[i] = ds_lo * static_cast<float>(in[i] & 0x0F) - dm_lo;
      out[i + 32] = ds_hi * static_cast<float>(in[i] >> 4) - dm_hi;
    }
  }
}

void quantize_q4_k(const float* x, uint8_t* b) {
  const auto q = quantize_k_asymmetric(x, 15, b);
  uint8_t* qs = b + 4 + kScaleBytes;
  for (ptrdiff_t g = 0; g < 4; ++g)
    for (int i = 0; i < 32; ++i) qs[32 * g + i] = static_cast<uint8_t>(q[64 * g + i] | (q[64 * g + 32 + i] << 4));
}

// ---- Q5_K: [f16 d][f16 dmin][12 scale bytes][32 bytes qh][128 bytes qs]; low 4 bits as Q4_K, and bit j
// of qh[i] is the fifth bit of element 32j + i. ------------------------------------------------------------

void dequantize_q5_k(const uint8_t* b, float* y) {
  const float d = load_f16(b), dmin = load_f16(b + 2);
  const ScalesMins u = unpack_scales_mins(b + 4);
  const uint8_t* sc = u.sc;
  const uint8_t* m = u.m;
  const uint8_t* qh = b + 4 + kScaleBytes;
  const uint8_t* qs = qh + 32;
  for (ptrdiff_t g = 0; g < 4; ++g) {
    const auto j_lo = static_cast<int>(2 * g), j_hi = j_lo + 1;
    const float ds_lo = d * static_cast<float>(sc[j_lo]), dm_lo = dmin * static_cast<float>(m[j_lo]);
    const float ds_hi = d * static_cast<float>(sc[j_hi]), dm_hi = dmin * static_cast<float>(m[j_hi]);
    float* out = y + 64 * g;
    const uint8_t* in = qs + 32 * g;
    for (int i = 0; i < 32; ++i) {
      const int lo = (in[i] & 0x0F) | (((qh[i] >> j_lo) & 1) << 4);
      const int hi = (in[i] >> 4) | (((qh[i] >> j_hi) & 1) << 4);
      out[i] = ds_lo * static_cast<float>(lo) - dm_lo;
      out[i + 32] = ds_hi * static_cast<float>(hi) - dm_hi;
    }
  }
}

void quantize_q5_k(const float* x, uint8_t* b) {
  const auto q = quantize_k_asymmetric(x, 31, b);
  uint8_t* qh = b + 4 + kScaleBytes;
  uint8_t* qs = qh + 32;
  std::memset(qh, 0, 32);
  for (ptrdiff_t g = 0; g < 4; ++g)
    for (int i = 0; i < 32; ++i) {
      const uint8_t lo = q[64 * g + i], hi = q[64 * g + 32 + i];
      qs[32 * g + i] = static_cast<uint8_t>((lo & 0x0F) | ((hi & 0x0F) << 4));
      qh[i] = static_cast<uint8_t>(qh[i] | ((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
    }
}

// ---- Q6_K: [128 bytes ql][64 bytes qh][16 x int8 scales][f16 d]; 16 sub-blocks of 16,
// x = (d * sc[e / 16]) * (q - 32) with a 6-bit q. For element e = 128h + r (gguf-py Q6_K.dequantize_blocks):
// low 4 bits are nibble r / 64 of ql[64h + r % 64], high 2 bits are bits 2(r / 32).. of qh[32h + r % 32]. --

void dequantize_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
  const float d = load_f16(b + 208);
  float ds[16];
  for (int s = 0; s < 16; ++s) ds[s] = d * static_cast<float>(scales[s]);
  for (ptrdiff_t h = 0; h < 2; ++h) {
    const uint8_t* l = ql + 64 * h;
    const uint8_t* hb = qh + 32 * h;
    float* out = y + 128 * h;
    const float* dsh = ds + 8 * h;
    for (int half = 0; half < 2; ++half) {  // 16 elements share each scale; a constant one vectorises
      const float s0 = dsh[half], s1 = dsh[2 + half], s2 = dsh[4 + half], s3 = dsh[6 + half];
      for (int i = 16 * half; i < 16 * half + 16; ++i) {
        const int q0 = ((l[i] & 0x0F) | (((hb[i] >> 0) & 3) << 4)) - 32;
        const int q1 = ((l[i + 32] & 0x0F) | (((hb[i] >> 2) & 3) << 4)) - 32;
        const int q2 = ((l[i] >> 4) | (((hb[i] >> 4) & 3) << 4)) - 32;
        const int q3 = ((l[i + 32] >> 4) | (((hb[i] >> 6) & 3) << 4)) - 32;
        out[i] = s0 * static_cast<float>(q0);
        out[i + 32] = s1 * static_cast<float>(q1);
        out[i + 64] = s2 * static_cast<float>(q2);
        out[i + 96] = s3 * static_cast<float>(q3);
      }
    }
  }
}

// Simple symmetric quantizer, far simpler than llama.cpp's search-based make_qx_quants: each sub-block of
// 16 gets scale = amax / 31 (q in [-31, 31], so -32 goes unused), scales are quantized to int8 against
// d = max scale / 127, and elements to round(x / (d * sc)).
void quantize_q6_k(const float* x, uint8_t* b) {
  float scale[16];
  float max_scale = 0.0f;
  for (int s = 0; s < 16; ++s) {
    float amax = 0.0f;
    for (int i = 0; i < 16; ++i) amax = std::max(amax, std::fabs(x[16 * s + i]));
    scale[s] = amax / 31.0f;
    max_scale = std::max(max_scale, scale[s]);
  }
  store_scale(b + 208, max_scale / 127.0f);
  const float d = load_f16(b + 208);
  auto* scales = reinterpret_cast<int8_t*>(b + 192);
  uint8_t q[kQKK];  // q + 32, in [1, 63]
  for (int s = 0; s < 16; ++s) {
    scales[s] = static_cast<int8_t>(d > 0.0f ? std::min(127.0f, std::round(scale[s] / d)) : 0.0f);
    const float ds = d * static_cast<float>(scales[s]);
    const float ids = ds > 0.0f ? 1.0f / ds : 0.0f;
    for (int i = 0; i < 16; ++i) {
      const float v = std::clamp(std::round(x[16 * s + i] * ids), -32.0f, 31.0f);
      q[16 * s + i] = static_cast<uint8_t>(static_cast<int>(v) + 32);
    }
  }
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  for (ptrdiff_t h = 0; h < 2; ++h) {
    const uint8_t* qq = q + 128 * h;
    for (int i = 0; i < 32; ++i) {
      ql[64 * h + i] = static_cast<uint8_t>((qq[i] & 0x0F) | ((qq[i + 64] & 0x0F) << 4));
      ql[64 * h + i + 32] = static_cast<uint8_t>((qq[i + 32] & 0x0F) | ((qq[i + 96] & 0x0F) << 4));
      qh[32 * h + i] = static_cast<uint8_t>((qq[i] >> 4) | ((qq[i + 32] >> 4) << 2) | ((qq[i + 64] >> 4) << 4) |
                                            ((qq[i + 96] >> 4) << 6));
    }
  }
}

using DequantizeBlock = void (*)(const uint8_t*, float*);
using QuantizeBlock = void (*)(const float*, uint8_t*);

struct BlockCodec {
  DequantizeBlock dequantize = nullptr;
  QuantizeBlock quantize = nullptr;
};

BlockCodec codec_for(DType t) {
  switch (t) {
    case DType::Q8_0:
      return {dequantize_q8_0, quantize_q8_0};
    case DType::Q4_0:
      return {dequantize_q4_0, quantize_q4_0};
    case DType::Q5_0:
      return {dequantize_q5_0, quantize_q5_0};
    case DType::Q4_K:
      return {dequantize_q4_k, quantize_q4_k};
    case DType::Q5_K:
      return {dequantize_q5_k, quantize_q5_k};
    case DType::Q6_K:
      return {dequantize_q6_k, quantize_q6_k};
    default:
      return {};
  }
}

void check_count(DType t, int64_t n) {
  const auto block = static_cast<int64_t>(dtype_block_elems(t));
  LTX_CHECK(n >= 0 && n % block == 0, "quant", n, " elements is not a whole number of ", dtype_name(t), " blocks of ",
            block);
}

}  // namespace

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  check_count(t, n);
  const auto* in = static_cast<const uint8_t*>(src);
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = load_f16(in + 2 * i);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        dst[i] = bf16_to_f32(h);
      }
      return;
    case DType::F8_E4M3:
      dequantize_f8_e4m3(in, dst, n);
      return;
    case DType::F8_E5M2:
      dequantize_f8_e5m2(in, dst, n);
      return;
    default:
      break;
  }
  const BlockCodec c = codec_for(t);
  if (!c.dequantize) fail("quant", "cannot dequantize " + std::string(dtype_name(t)) + " to f32");
  const auto block = static_cast<int64_t>(dtype_block_elems(t));
  const size_t bytes = dtype_block_bytes(t);
  for (int64_t i = 0; i < n / block; ++i) c.dequantize(in + i * bytes, dst + i * block);
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
  check_count(t, n);
  auto* out = static_cast<uint8_t*>(dst);
  switch (t) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) store_f16(out + 2 * i, src[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    default:
      break;
  }
  const BlockCodec c = codec_for(t);
  if (!c.quantize) fail("quant", "cannot quantize f32 to " + std::string(dtype_name(t)));
  for (int64_t i = 0; i < n; ++i)
    LTX_CHECK(std::isfinite(src[i]), "quant", "cannot quantize non-finite value ", src[i], " at element ", i, " to ",
              dtype_name(t));
  const auto block = static_cast<int64_t>(dtype_block_elems(t));
  const size_t bytes = dtype_block_bytes(t);
  for (int64_t i = 0; i < n / block; ++i) c.quantize(src + i * block, out + i * bytes);
}

}  // namespace ltx
