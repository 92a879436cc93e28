// AVX-512 decoders for one weight row (dequant_avx512.h). The block layouts are ggml's block_q8_0, block_q4_0,
// block_q5_0, block_q4_K, block_q5_K and block_q6_K, as core/quant.cpp describes them beside its scalar reference;
// the 8-bit floats are torch's float8_e4m3fn and float8_e5m2 (core/float8.cpp).
//
// Bit-exact with dequantize_row: each element is formed by the same f32 operations in the same order as there (a
// product, then for Q4_K / Q5_K a difference), which a vector lane rounds exactly as scalar code does, and the
// per-block scale products (d·sc, dmin·m) are the same scalar products. GCC contracts a product and a difference
// into one FMA even in ISO C++ mode when FMA is enabled, as it is here (quant.cpp is built without -mfma, so it
// has none), so the difference is written with an explicit rounding mode, which GCC never fuses.
// The f16 block scales are widened by vcvtph2ps, which differs from f16_to_f32 only by quieting a signalling NaN;
// every scale then goes through a product, which quiets it in the scalar code too.
#include "backend/cpu/matmul/dequant_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "backend/cpu/vec_avx512.h"
#include "core/quant.h"

// GCC 12 warns inside the masked-load intrinsics, whose pass-through operands are deliberately undefined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace ltx::cpu::gemm {
namespace {

// Where 32 decoded values go (lo: the first 16): f32 as they are, or rounded to bf16.
inline void put32(float* dst, __m512 lo, __m512 hi) {
  _mm512_storeu_ps(dst, lo);
  _mm512_storeu_ps(dst + 16, hi);
}
inline void put32(uint16_t* dst, __m512 lo, __m512 hi) { _mm512_storeu_si512(dst, vec::to_bf16_rne(hi, lo)); }

inline float load_scale(const uint8_t* p) {  // an f16 block scale
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline __m512i load_u8x16(const uint8_t* p) {  // 16 bytes, zero-extended to 32-bit lanes
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m512 to_f32(__m512i v) { return _mm512_cvtepi32_ps(v); }

// a - b, never fused with the product that made a: a fused one differs only in which NaN it returns (the K formats'
// products are exact), but that is a different bit pattern.
inline __m512 sub_unfused(__m512 a, __m512 b) {
  return _mm512_sub_round_ps(a, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// ---- Q8_0: [f16 d][32 x int8]; x = q·d. ----------------------------------------------------------------------

template <typename Out>
void decode_q8_0(const uint8_t* b, Out* y) {
  const __m512 d = _mm512_set1_ps(load_scale(b));
  const auto* q = reinterpret_cast<const __m128i*>(b + 2);
  put32(y, _mm512_mul_ps(to_f32(_mm512_cvtepi8_epi32(_mm_loadu_si128(q))), d),
        _mm512_mul_ps(to_f32(_mm512_cvtepi8_epi32(_mm_loadu_si128(q + 1))), d));
}

// ---- Q4_0: [f16 d][16 bytes]; element i < 16 is the low nibble of byte i, 16 + i the high one; x = d·(q - 8). --

template <typename Out>
void decode_q4_0(const uint8_t* b, Out* y) {
  const __m512 d = _mm512_set1_ps(load_scale(b));
  const __m512i q = load_u8x16(b + 2), eight = _mm512_set1_epi32(8);
  put32(y, _mm512_mul_ps(d, to_f32(_mm512_sub_epi32(_mm512_and_si512(q, _mm512_set1_epi32(0x0F)), eight))),
        _mm512_mul_ps(d, to_f32(_mm512_sub_epi32(_mm512_srli_epi32(q, 4), eight))));
}

// ---- Q5_0: [f16 d][32 bits qh][16 bytes qs]; Q4_0's nibbles with bit e of qh as element e's fifth bit;
// x = d·(q - 16). ---------------------------------------------------------------------------------------------

template <typename Out>
void decode_q5_0(const uint8_t* b, Out* y) {
  const __m512 d = _mm512_set1_ps(load_scale(b));
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);  // little-endian, as the format
  const __m512i q = load_u8x16(b + 6), sixteen = _mm512_set1_epi32(16);
  __m512i lo = _mm512_and_si512(q, _mm512_set1_epi32(0x0F)), hi = _mm512_srli_epi32(q, 4);
  lo = _mm512_mask_or_epi32(lo, static_cast<__mmask16>(qh), lo, sixteen);
  hi = _mm512_mask_or_epi32(hi, static_cast<__mmask16>(qh >> 16), hi, sixteen);
  put32(y, _mm512_mul_ps(d, to_f32(_mm512_sub_epi32(lo, sixteen))),
        _mm512_mul_ps(d, to_f32(_mm512_sub_epi32(hi, sixteen))));
}

}  // namespace

// ---- Q4_K / Q5_K: [f16 d][f16 dmin][12 scale bytes][Q5_K only: 32 bytes qh][128 bytes qs]; sub-block j (32
// elements) is nibble j % 2 of bytes 32(j / 2) .. of qs, with bit j of qh[i] as element 32j + i's fifth bit;
// x = (d·sc[j])·q - dmin·m[j]. The 6-bit sc and m unpack as core/quant.cpp's unpack_scales_mins. -------------------

// The 8 sc and m, four bytes at a time: bytes 0-3 hold sc[0..3] in bits 0-5 and bits 4-5 of sc[4..7] in bits 6-7,
// bytes 4-7 the same for m, bytes 8-11 bits 0-3 of sc[4..7] (low nibbles) and of m[4..7] (high nibbles).
SubScales k_sub_scales(const uint8_t* b) {
  uint32_t s[3];
  std::memcpy(s, b + 4, 12);  // little-endian, as the format
  constexpr uint32_t kLow6 = 0x3F3F3F3F, kLow4 = 0x0F0F0F0F, kBits45 = 0x30303030;
  const uint64_t sc = (s[0] & kLow6) | uint64_t{(s[2] & kLow4) | ((s[0] >> 2) & kBits45)} << 32;
  const uint64_t m = (s[1] & kLow6) | uint64_t{((s[2] >> 4) & kLow4) | ((s[1] >> 2) & kBits45)} << 32;
  const auto widen = [](uint64_t bytes) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(bytes))));
  };
  SubScales r;
  _mm256_store_ps(r.ds, _mm256_mul_ps(_mm256_set1_ps(load_scale(b)), widen(sc)));
  _mm256_store_ps(r.dm, _mm256_mul_ps(_mm256_set1_ps(load_scale(b + 2)), widen(m)));
  return r;
}

namespace {

// Q4_K when HighBit is false, Q5_K when true.
template <bool HighBit, typename Out>
void decode_qk(const uint8_t* b, Out* y) {
  const SubScales s = k_sub_scales(b);
  const uint8_t* qh = b + 16;
  const uint8_t* qs = HighBit ? qh + 32 : qh;
  const __m256i high_bits = HighBit ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)) : __m256i{};
  for (ptrdiff_t j = 0; j < 8; ++j) {
    const __m512 ds = _mm512_set1_ps(s.ds[j]), dm = _mm512_set1_ps(s.dm[j]);
    const uint8_t* in = qs + 32 * (j / 2);
    __mmask32 fifth = 0;
    if constexpr (HighBit) fifth = _mm256_test_epi8_mask(high_bits, _mm256_set1_epi8(static_cast<char>(1 << j)));
    __m512 v[2];
    for (ptrdiff_t h = 0; h < 2; ++h) {
      const __m512i bytes = load_u8x16(in + 16 * h);
      __m512i q = (j & 1) ? _mm512_srli_epi32(bytes, 4) : _mm512_and_si512(bytes, _mm512_set1_epi32(0x0F));
      if constexpr (HighBit)
        q = _mm512_mask_or_epi32(q, static_cast<__mmask16>(fifth >> (16 * h)), q, _mm512_set1_epi32(16));
      v[h] = sub_unfused(_mm512_mul_ps(ds, to_f32(q)), dm);
    }
    put32(y + 32 * j, v[0], v[1]);
  }
}

// ---- Q6_K: [128 bytes ql][64 bytes qh][16 x int8 scales][f16 d]; x = (d·sc[e / 16])·(q - 32). Element
// 128h + 32k + i (k, i < 4, 32) has nibble k / 2 of ql[64h + 32(k % 2) + i] and bits 2k, 2k + 1 of qh[32h + i]. ----

template <typename Out>
void decode_q6_k(const uint8_t* b, Out* y) {
  const auto* scales = reinterpret_cast<const __m128i*>(b + 192);  // 16 x int8
  const float d = load_scale(b + 208);
  alignas(64) float ds[16];
  _mm512_store_ps(ds, _mm512_mul_ps(_mm512_set1_ps(d), to_f32(_mm512_cvtepi8_epi32(_mm_loadu_si128(scales)))));
  const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30), bias = _mm256_set1_epi8(32);
  for (ptrdiff_t h = 0; h < 2; ++h) {
    const auto* ql = reinterpret_cast<const __m256i*>(b + 64 * h);
    const __m256i l0 = _mm256_loadu_si256(ql), l1 = _mm256_loadu_si256(ql + 1);
    const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * h));
    // Bytes are shifted as 16-bit lanes; the masks drop what crosses from the neighbouring byte.
    const __m256i q[4] = {
        _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), bits45)),
        _mm256_or_si256(_mm256_and_si256(l1, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), bits45)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), _mm256_and_si256(hb, bits45)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                        _mm256_and_si256(_mm256_srli_epi16(hb, 2), bits45)),
    };
    for (ptrdiff_t k = 0; k < 4; ++k) {
      const __m256i v = _mm256_sub_epi8(q[k], bias);  // q - 32 in [-32, 31]
      const __m512 lo = to_f32(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(v)));
      const __m512 hi = to_f32(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(v, 1)));
      const float* s = ds + 8 * h + 2 * k;  // 16 elements per scale
      put32(y + 128 * h + 32 * k, _mm512_mul_ps(_mm512_set1_ps(s[0]), lo), _mm512_mul_ps(_mm512_set1_ps(s[1]), hi));
    }
  }
}

// ---- 8-bit floats: to f32 16 at a time (bytes in 32-bit lanes), to bf16 32 at a time (bytes in 16-bit lanes). Every
// value of both formats is exact in bf16, so the bf16 path builds the bits vcvtneps2bf16 would return for the f32. --

// E4M3FN (core/float8.cpp decode_e4m3): normals rebias the exponent from 7 to 127 (the bits move up 20 places),
// subnormals are m·2^-9, S.1111.111 is NaN (torch's quiet NaN, with the sign).
inline __m512 e4m3_to_f32(__m512i x) {
  const __m512i mag = _mm512_and_si512(x, _mm512_set1_epi32(0x7F));
  __m512 v = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(mag, 20), _mm512_set1_epi32(120 << 23)));
  const __m512 subnormal = _mm512_mul_ps(to_f32(mag), _mm512_set1_ps(0x1p-9f));
  v = _mm512_mask_mov_ps(v, _mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(8)), subnormal);
  v = _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(mag, _mm512_set1_epi32(0x7F)),
                         _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x80)), 24);
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), sign));
}

// E5M2: the upper byte of an f16, widened as f16_to_f32 does (core/half.h): exponents rebias from 15 to 127,
// subnormals are m·2^-16, exponent 31 keeps its mantissa bits as an infinity or NaN (a signalling one stays so).
inline __m512 e5m2_to_f32(__m512i x) {
  const __m512i mag = _mm512_and_si512(x, _mm512_set1_epi32(0x7F)), shifted = _mm512_slli_epi32(mag, 21);
  __m512 v = _mm512_castsi512_ps(_mm512_add_epi32(shifted, _mm512_set1_epi32(112 << 23)));
  const __m512 subnormal = _mm512_mul_ps(to_f32(mag), _mm512_set1_ps(0x1p-16f));
  v = _mm512_mask_mov_ps(v, _mm512_cmplt_epi32_mask(mag, _mm512_set1_epi32(4)), subnormal);
  v = _mm512_mask_mov_ps(v, _mm512_cmpge_epi32_mask(mag, _mm512_set1_epi32(0x7C)),
                         _mm512_castsi512_ps(_mm512_or_si512(shifted, _mm512_set1_epi32(0x7F800000))));
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x80)), 24);
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), sign));
}

// bf16 bits of m·unit for m < 32, exact for the subnormals' m < 8: a vpermw table.
struct Bf16Table {
  alignas(64) uint16_t bits[32];
};
constexpr Bf16Table multiples(float unit) {
  Bf16Table t{};
  for (int m = 0; m < 32; ++m)
    t.bits[m] = static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(m) * unit) >> 16);
  return t;
}
constexpr Bf16Table kE4M3Subnormals = multiples(0x1p-9f);
constexpr Bf16Table kE5M2Subnormals = multiples(0x1p-16f);

inline __m512i bf16_sign(__m512i x) { return _mm512_slli_epi16(_mm512_and_si512(x, _mm512_set1_epi16(0x80)), 8); }

// As e4m3_to_f32, in bf16 (7 mantissa bits: the 3 move up 4 places); NaN is 0x7FC0, as vcvtneps2bf16 gives.
inline __m512i e4m3_to_bf16(__m512i x) {
  const __m512i mag = _mm512_and_si512(x, _mm512_set1_epi16(0x7F));
  __m512i v = _mm512_add_epi16(_mm512_slli_epi16(mag, 4), _mm512_set1_epi16(120 << 7));
  v = _mm512_mask_permutexvar_epi16(v, _mm512_cmplt_epu16_mask(mag, _mm512_set1_epi16(8)), mag,
                                    _mm512_load_si512(kE4M3Subnormals.bits));
  v = _mm512_mask_mov_epi16(v, _mm512_cmpeq_epi16_mask(mag, _mm512_set1_epi16(0x7F)), _mm512_set1_epi16(0x7FC0));
  return _mm512_or_si512(v, bf16_sign(x));
}

// As e5m2_to_f32, in bf16 (the 2 mantissa bits move up 5 places); vcvtneps2bf16 returns every NaN quiet (bit 6
// set), a signalling one included.
inline __m512i e5m2_to_bf16(__m512i x) {
  const __m512i mag = _mm512_and_si512(x, _mm512_set1_epi16(0x7F)), shifted = _mm512_slli_epi16(mag, 5);
  __m512i v = _mm512_add_epi16(shifted, _mm512_set1_epi16(112 << 7));
  v = _mm512_mask_permutexvar_epi16(v, _mm512_cmplt_epu16_mask(mag, _mm512_set1_epi16(4)), mag,
                                    _mm512_load_si512(kE5M2Subnormals.bits));
  v = _mm512_mask_mov_epi16(v, _mm512_cmpeq_epi16_mask(mag, _mm512_set1_epi16(0x7C)), _mm512_set1_epi16(0x7F80));
  v = _mm512_mask_mov_epi16(v, _mm512_cmpgt_epu16_mask(mag, _mm512_set1_epi16(0x7C)),
                            _mm512_or_si512(shifted, _mm512_set1_epi16(0x7FC0)));
  return _mm512_or_si512(v, bf16_sign(x));
}

// ---- Rows ---------------------------------------------------------------------------------------------------------

template <typename Out>
using RowDecoder = void (*)(const uint8_t* src, int64_t n, Out* dst);

// Block sizes (elements, bytes) as core/dtype.cpp lists them.
template <int Elems, int Bytes, typename Out, void (*Block)(const uint8_t*, Out*)>
void decode_blocks(const uint8_t* src, int64_t n, Out* dst) {
  for (int64_t i = 0; i < n / Elems; ++i) Block(src + i * Bytes, dst + i * Elems);
}

template <typename Out, __m512 (*ToF32)(__m512i), __m512i (*ToBf16)(__m512i)>
void decode_f8(const uint8_t* src, int64_t n, Out* dst) {
  int64_t i = 0;
  if constexpr (std::is_same_v<Out, float>) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, ToF32(load_u8x16(src + i)));
    if (i < n) {
      const auto m = static_cast<__mmask16>((1u << (n - i)) - 1u);
      _mm512_mask_storeu_ps(dst + i, m, ToF32(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, src + i))));
    }
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      _mm512_storeu_si512(dst + i, ToBf16(_mm512_cvtepu8_epi16(bytes)));
    }
    if (i < n) {
      const auto m = static_cast<__mmask32>((1u << (n - i)) - 1u);
      _mm512_mask_storeu_epi16(dst + i, m, ToBf16(_mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, src + i))));
    }
  }
}

template <typename Out>
RowDecoder<Out> decoder_for(DType t) {
  switch (t) {
    case DType::Q8_0:
      return decode_blocks<32, 34, Out, decode_q8_0<Out>>;
    case DType::Q4_0:
      return decode_blocks<32, 18, Out, decode_q4_0<Out>>;
    case DType::Q5_0:
      return decode_blocks<32, 22, Out, decode_q5_0<Out>>;
    case DType::Q4_K:
      return decode_blocks<256, 144, Out, decode_qk<false, Out>>;
    case DType::Q5_K:
      return decode_blocks<256, 176, Out, decode_qk<true, Out>>;
    case DType::Q6_K:
      return decode_blocks<256, 210, Out, decode_q6_k<Out>>;
    case DType::F8_E4M3:
      return decode_f8<Out, e4m3_to_f32, e4m3_to_bf16>;
    case DType::F8_E5M2:
      return decode_f8<Out, e5m2_to_f32, e5m2_to_bf16>;
    default:
      return nullptr;
  }
}

}  // namespace

bool decode_row_vectorized(DType t) { return decoder_for<float>(t) != nullptr; }

void decode_row_f32(DType t, const std::byte* src, int64_t n, float* dst) {
  if (const RowDecoder<float> decode = decoder_for<float>(t))
    decode(reinterpret_cast<const uint8_t*>(src), n, dst);
  else
    dequantize_row(t, src, dst, n);
}

void decode_row_bf16(DType t, const std::byte* src, int64_t n, uint16_t* dst) {
  if (const RowDecoder<uint16_t> decode = decoder_for<uint16_t>(t)) {
    decode(reinterpret_cast<const uint8_t*>(src), n, dst);
    return;
  }
  // No vector decoder: dequantize_row a few blocks at a time into f32, then round.
  const auto block = static_cast<int64_t>(dtype_block_elems(t)), bytes = static_cast<int64_t>(dtype_block_bytes(t));
  constexpr int64_t kChunk = 1024;
  alignas(64) float f32[kChunk];
  const int64_t step = std::max<int64_t>(1, kChunk / block) * block;
  for (int64_t i = 0; i < n; i += step) {
    const int64_t count = std::min(step, n - i);
    dequantize_row(t, src + i / block * bytes, f32, count);
    for (int64_t j = 0; j < count; j += 16) {
      const auto m = static_cast<__mmask16>(count - j >= 16 ? 0xffff : (1u << (count - j)) - 1u);
      const __m256i h = vec::to_bf16_rne(_mm512_maskz_loadu_ps(m, f32 + j));
      _mm256_mask_storeu_epi16(dst + i + j, m, h);
    }
  }
}

}  // namespace ltx::cpu::gemm
