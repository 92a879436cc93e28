// The int8-activation path, an option (core/int8_activations.h; `ltx generate --int8-activations`): out = a·Wᵀ with W
// in a GGUF block format (Q8_0, Q4_0, Q5_0, Q4_K, Q5_K; Q6_K for 1-4 rows) and a in f32 or bf16, multiplied the way
// llama.cpp's CPU backend multiplies quantized weights, in integers:
//   - each row of a is quantized per block of 32 along k: d = amax / 127, q = round(x / d) (int8), as ggml's
//     quantize_row_q8_0;
//   - each weight block of 32 is written as unsigned bytes u with a scale s and an offset o, w = s·u - o (Q8_0:
//     u = q + 128, o = 128·s; Q4_0 / Q5_0: the stored nibbles, o = 8·s / 16·s; Q4_K / Q5_K: the sub-block's q with
//     s = d·sc and o = dmin·m), exactly the values dequantize_row gives;
//   - vpdpbusd (AVX512_VNNI) sums a block's 32 products u·q in int32, and the block adds to the f32 output
//       out += (s·d)·Σ u·q - o·(d·Σ q).
//     For the *_0 formats o = z·s with an integer zero point z, so the o term is folded into the integer sum, which
//     starts at -z·Σ q.
// The only rounding besides f32 accumulation is the activations' (at most d/2 per element, 1/254 of its block's
// largest magnitude); `ltx bench --matmul --int8` measures it against the bf16 path. NaN or Inf in a block of a makes
// that block's scale NaN, so it reaches the output instead of vanishing in the int8 conversion.
//
// This file: the activations' quantization (shared, matmul_int8.h) and the blocked GEMM for more than 4 rows, blocked
// as the bf16 GEMM (matmul_gemm_avx512.cpp): per task of a threads grid, per NC-column block and KC slice, W is decoded
// once into 32-column strips ([block][8 groups of 4 k][32 columns][4 bytes], then the 32 s and 32 o), and a's rows
// are quantized a MC-row block at a time; a 6×32 tile keeps its int32 block sums and f32 outputs in 24 registers.
// Every output is summed over k in the same order whatever the grid, so the bits do not depend on the thread count.
// 1-4 rows read W in place, column after column (matmul_int8_rows_avx512.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "backend/cpu/kernel_scratch.h"
#include "backend/cpu/matmul/dequant_avx512.h"
#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/matmul/matmul_int8.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/int8_activations.h"
#include "core/thread_pool.h"

namespace ltx::cpu::gemm {
namespace int8 {

// ---- a: rows quantized per block of 32 --------------------------------------------------------------------------

int64_t quantized_rows_bytes(int64_t rows, int64_t kc) {
  return aligned64(rows * kc) + 3 * aligned64(rows * (kc / kBlock) * 4);
}

QuantizedRows carve_quantized_rows(std::byte* at, int64_t rows, int64_t kc) {
  QuantizedRows r;
  r.kc = kc;
  r.q = reinterpret_cast<int8_t*>(at);
  at += aligned64(rows * kc);
  const int64_t per = aligned64(rows * (kc / kBlock) * 4);
  r.d = reinterpret_cast<float*>(at);
  r.start = reinterpret_cast<int32_t*>(at + per);
  r.d_sum = reinterpret_cast<float*>(at + 2 * per);
  return r;
}

void quantize_rows(const Problem& p, int64_t m0, int64_t rows, int64_t k0, int64_t kc, int z,
                   const QuantizedRows& out) {
  const int64_t blocks = kc / kBlock;
  const bool bf16 = p.a.dtype == DType::BF16;
  const int64_t es = bf16 ? 2 : 4;
  for (int64_t i = 0; i < rows; ++i) {
    const std::byte* row = p.a.data + ((m0 + i) * p.a.sm + k0) * es;
    for (int64_t b = 0; b < blocks; ++b) {
      __m512 x0, x1;
      if (bf16) {
        const auto* h = reinterpret_cast<const uint16_t*>(row) + b * kBlock;
        x0 = vec::load_bf16(h, 0xffff);
        x1 = vec::load_bf16(h + 16, 0xffff);
      } else {
        const auto* f = reinterpret_cast<const float*>(row) + b * kBlock;
        x0 = _mm512_loadu_ps(f);
        x1 = _mm512_loadu_ps(f + 16);
      }
      const bool non_finite = (_mm512_cmp_ps_mask(_mm512_sub_ps(x0, x0), _mm512_setzero_ps(), _CMP_NEQ_UQ) |
                               _mm512_cmp_ps_mask(_mm512_sub_ps(x1, x1), _mm512_setzero_ps(), _CMP_NEQ_UQ)) != 0;
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
      const float d = non_finite ? std::numeric_limits<float>::quiet_NaN() : amax / 127.0f;
      const float inv = d > 0.0f ? 1.0f / d : 0.0f;  // an all-zero block gives q = 0
      // Nearest, ties to even; a non-finite block's q are 0 (its NaN d carries it to the output).
      const __mmask16 keep = non_finite ? 0 : 0xffff;
      const __m512i q0 = _mm512_maskz_cvtps_epi32(keep, _mm512_mul_ps(x0, _mm512_set1_ps(inv)));
      const __m512i q1 = _mm512_maskz_cvtps_epi32(keep, _mm512_mul_ps(x1, _mm512_set1_ps(inv)));
      int8_t* q = out.q + i * kc + b * kBlock;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtsepi32_epi8(q0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtsepi32_epi8(q1));
      const int32_t sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
      out.d[i * blocks + b] = d;
      out.start[i * blocks + b] = -z * sum;
      out.d_sum[i * blocks + b] = d * static_cast<float>(sum);
    }
  }
}

}  // namespace int8

namespace {

using namespace int8;

constexpr int kTileRows = 6;                                                  // rows of a per tile
constexpr int64_t kTileCols = 32;                                             // columns per W strip (two vectors)
constexpr int64_t kRowsPerBlock = 16 * kTileRows;                             // rows of a quantized at a time (MC)
constexpr int64_t kSliceK = 1024;                                             // KC: a multiple of the K-quants' 256
constexpr int64_t kColsPerBlock = 512;                                        // NC
constexpr int64_t kStripBlockBytes = kBlock * kTileCols + 2 * kTileCols * 4;  // u8 values, then s[32], o[32]

// ---- W: one row's slice as u bytes and per-block s, o ----------------------------------------------------------

// Elements [k0, k0 + kc) of the encoded row `row` (k0 and kc whole blocks of t) into u[kc], s[kc / 32], o[kc / 32].
void decode_slice(DType t, const std::byte* row, int64_t k0, int64_t kc, uint8_t* u, float* s, float* o) {
  const auto* src = reinterpret_cast<const uint8_t*>(row);
  switch (t) {
    case DType::Q8_0: {  // [f16 d][32 int8]
      for (int64_t b = 0; b < kc / kBlock; ++b) {
        const uint8_t* blk = src + (k0 / kBlock + b) * 34;
        s[b] = f16_scale(blk);
        o[b] = 128.0f * s[b];
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + kBlock * b), _mm256_xor_si256(q, _mm256_set1_epi8(-128)));
      }
      return;
    }
    case DType::Q4_0: {  // [f16 d][16 bytes]: element i the low nibble of byte i, element 16 + i the high one
      for (int64_t b = 0; b < kc / kBlock; ++b) {
        const uint8_t* blk = src + (k0 / kBlock + b) * 18;
        s[b] = f16_scale(blk);
        o[b] = 8.0f * s[b];
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m128i nib = _mm_set1_epi8(0x0F);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(u + kBlock * b), _mm_and_si128(q, nib));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(u + kBlock * b + 16), _mm_and_si128(_mm_srli_epi16(q, 4), nib));
      }
      return;
    }
    case DType::Q5_0: {  // [f16 d][32-bit qh][16 bytes]: as Q4_0 with bit i of qh as element i's fifth bit
      for (int64_t b = 0; b < kc / kBlock; ++b) {
        const uint8_t* blk = src + (k0 / kBlock + b) * 22;
        s[b] = f16_scale(blk);
        o[b] = 16.0f * s[b];
        uint32_t qh;
        std::memcpy(&qh, blk + 2, 4);
        uint8_t* out = u + kBlock * b;
        for (int i = 0; i < 16; ++i) {
          out[i] = static_cast<uint8_t>((blk[6 + i] & 0x0F) | (((qh >> i) & 1u) << 4));
          out[16 + i] = static_cast<uint8_t>((blk[6 + i] >> 4) | (((qh >> (16 + i)) & 1u) << 4));
        }
      }
      return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {  // super-blocks of 256 (dequant_avx512.cpp): sub-block j is nibble j % 2 of qs[32(j/2) ..]
      const bool q5 = t == DType::Q5_K;
      const int64_t bytes = q5 ? 176 : 144;
      for (int64_t sb = 0; sb < kc / 256; ++sb) {
        const uint8_t* blk = src + (k0 / 256 + sb) * bytes;
        const SubScales scales = k_sub_scales(blk);
        const uint8_t* qh = blk + 16;
        const uint8_t* qs = q5 ? qh + 32 : qh;
        for (int j = 0; j < 8; ++j) {
          s[8 * sb + j] = scales.ds[j];
          o[8 * sb + j] = scales.dm[j];
          const __m256i bytes32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (j / 2)));
          __m256i q = _mm256_and_si256(j % 2 == 0 ? bytes32 : _mm256_srli_epi16(bytes32, 4), _mm256_set1_epi8(0x0F));
          if (q5) {  // bit j of qh[i] is the fifth bit of element i of sub-block j
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
            const __mmask32 fifth = _mm256_test_epi8_mask(h, _mm256_set1_epi8(static_cast<char>(1 << j)));
            q = _mm256_or_si256(q, _mm256_maskz_mov_epi8(fifth, _mm256_set1_epi8(0x10)));
          }
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 256 * sb + kBlock * j), q);
        }
      }
      return;
    }
    default:
      LTX_CHECK(false, "cpu", "int8 matmul: no decoder for ", dtype_name(t));
  }
}

// W rows n0 .. n0 + cols, elements [k0, k0 + kc), as 32-column strips of kc / 32 blocks each (columns past `cols`
// are zero: u = 0, s = o = 0).
void pack_w(const Problem& p, int64_t k0, int64_t kc, int64_t n0, int64_t cols, std::byte* dst) {
  const int64_t blocks = kc / kBlock;
  const int64_t strip_bytes = blocks * kStripBlockBytes;
  thread_local std::unique_ptr<uint8_t[]> u_buf;
  thread_local std::unique_ptr<float[]> s_buf, o_buf;
  if (!u_buf) {
    u_buf = std::make_unique<uint8_t[]>(kSliceK);
    s_buf = std::make_unique<float[]>(kSliceK / kBlock);
    o_buf = std::make_unique<float[]>(kSliceK / kBlock);
  }
  const int64_t strips = (cols + kTileCols - 1) / kTileCols;
  if (cols % kTileCols != 0) std::memset(dst + (strips - 1) * strip_bytes, 0, static_cast<size_t>(strip_bytes));
  for (int64_t j = 0; j < cols; ++j) {
    const std::byte* row = p.b.data + (n0 + j) * p.b.row_bytes;
    if (j + 1 < cols) prefetch_bytes(p.b.data + (n0 + j + 1) * p.b.row_bytes, p.b.row_bytes * kc / p.k);
    decode_slice(p.b.dtype, row, k0, kc, u_buf.get(), s_buf.get(), o_buf.get());
    std::byte* strip = dst + j / kTileCols * strip_bytes;
    const int64_t lane = j % kTileCols;
    for (int64_t b = 0; b < blocks; ++b) {
      std::byte* blk = strip + b * kStripBlockBytes;
      for (int g = 0; g < 8; ++g) std::memcpy(blk + g * kTileCols * 4 + lane * 4, u_buf.get() + b * kBlock + 4 * g, 4);
      std::memcpy(blk + kBlock * kTileCols + lane * 4, s_buf.get() + b, 4);
      std::memcpy(blk + kBlock * kTileCols + kTileCols * 4 + lane * 4, o_buf.get() + b, 4);
    }
  }
}

// ---- the tile kernel -----------------------------------------------------------------------------------------

// c[R rows][32 columns] (+)= a's rows R × W's strip over `blocks` blocks; c f32 with row stride ldc; m0/m1 mask the
// two column vectors. Offsets: the K-quants' per-block o term (else folded into the integer start).
template <int R, bool Offsets>
void tile(const QuantizedRows& a, int64_t row0, const std::byte* w, int64_t blocks, float* c, int64_t ldc, __mmask16 m0,
          __mmask16 m1, bool accumulate) {
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = accumulate ? _mm512_maskz_loadu_ps(m0, c + r * ldc) : _mm512_setzero_ps();
    acc[r][1] = accumulate ? _mm512_maskz_loadu_ps(m1, c + r * ldc + 16) : _mm512_setzero_ps();
  }
  const int64_t per_row = a.kc / kBlock;
  for (int64_t b = 0; b < blocks; ++b) {
    const std::byte* wb = w + b * kStripBlockBytes;
    __m512i dot[R][2];
    for (int r = 0; r < R; ++r) {
      const __m512i start = Offsets ? _mm512_setzero_si512() : _mm512_set1_epi32(a.start[(row0 + r) * per_row + b]);
      dot[r][0] = dot[r][1] = start;
    }
    const int8_t* ab = a.q + row0 * a.kc + b * kBlock;
    for (int g = 0; g < 8; ++g) {
      const __m512i w0 = _mm512_loadu_si512(wb + g * kTileCols * 4);
      const __m512i w1 = _mm512_loadu_si512(wb + g * kTileCols * 4 + 64);
      for (int r = 0; r < R; ++r) {
        int32_t four;
        std::memcpy(&four, ab + r * a.kc + 4 * g, 4);
        const __m512i x = _mm512_set1_epi32(four);
        dot[r][0] = _mm512_dpbusd_epi32(dot[r][0], w0, x);
        dot[r][1] = _mm512_dpbusd_epi32(dot[r][1], w1, x);
      }
    }
    const auto* so = reinterpret_cast<const float*>(wb + kBlock * kTileCols);
    const __m512 s0 = _mm512_loadu_ps(so), s1 = _mm512_loadu_ps(so + 16);
    for (int r = 0; r < R; ++r) {
      const int64_t at = (row0 + r) * per_row + b;
      const __m512 d = _mm512_set1_ps(a.d[at]);
      acc[r][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][0]), _mm512_mul_ps(s0, d), acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][1]), _mm512_mul_ps(s1, d), acc[r][1]);
      if constexpr (Offsets) {
        const __m512 d_sum = _mm512_set1_ps(a.d_sum[at]);
        acc[r][0] = _mm512_fnmadd_ps(_mm512_loadu_ps(so + 32), d_sum, acc[r][0]);
        acc[r][1] = _mm512_fnmadd_ps(_mm512_loadu_ps(so + 48), d_sum, acc[r][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, m0, acc[r][0]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, acc[r][1]);
  }
}

template <bool Offsets>
void tile_rows(int rows, const QuantizedRows& a, int64_t row0, const std::byte* w, int64_t blocks, float* c,
               int64_t ldc, __mmask16 m0, __mmask16 m1, bool accumulate) {
  switch (rows) {
    case 1:
      return tile<1, Offsets>(a, row0, w, blocks, c, ldc, m0, m1, accumulate);
    case 2:
      return tile<2, Offsets>(a, row0, w, blocks, c, ldc, m0, m1, accumulate);
    case 3:
      return tile<3, Offsets>(a, row0, w, blocks, c, ldc, m0, m1, accumulate);
    case 4:
      return tile<4, Offsets>(a, row0, w, blocks, c, ldc, m0, m1, accumulate);
    case 5:
      return tile<5, Offsets>(a, row0, w, blocks, c, ldc, m0, m1, accumulate);
    default:
      return tile<6, Offsets>(a, row0, w, blocks, c, ldc, m0, m1, accumulate);
  }
}

// ---- the driver -------------------------------------------------------------------------------------------------

struct Range {
  int64_t begin, end;
};

Range part(int64_t n, int64_t unit, int parts, int i) {
  const int64_t units = (n + unit - 1) / unit;
  return {std::min(n, units * i / parts * unit), std::min(n, units * (i + 1) / parts * unit)};
}

// Threads along N while there are strips for each (every thread decodes only its own columns of W), else along M.
void grid(const Problem& p, int& tm, int& tn) {
  const int threads =
      2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1e6 ? 1 : thread_count();
  const int64_t strips = (p.n + kTileCols - 1) / kTileCols;
  tn = static_cast<int>(std::min<int64_t>(threads, strips));
  tm = threads / tn;
}

bool f32_direct(const Problem& p) { return p.out_dtype == DType::F32 && p.epilogue == nullptr; }

struct TaskScratch {
  int64_t w = 0, a = 0, c = 0;
  int64_t total() const { return aligned64(w) + aligned64(a) + aligned64(c); }
};

TaskScratch task_scratch(const Problem& p, int64_t rows, int64_t cols) {
  TaskScratch s;
  const int64_t kc = std::min(kSliceK, p.k);
  s.w = (std::min(kColsPerBlock, cols) + kTileCols - 1) / kTileCols * (kc / kBlock) * kStripBlockBytes;
  s.a = quantized_rows_bytes(std::min(kRowsPerBlock, rows), kc);
  if (!f32_direct(p)) s.c = rows * kColsPerBlock * 4;  // f32 partial sums, stored (or given to the epilogue) at the end
  return s;
}

int64_t largest_task_bytes(const Problem& p, int tm, int tn) {
  int64_t rows = 0, cols = 0;
  for (int i = 0; i < tm; ++i)
    rows = std::max(rows, part(p.m, kTileRows, tm, i).end - part(p.m, kTileRows, tm, i).begin);
  for (int j = 0; j < tn; ++j)
    cols = std::max(cols, part(p.n, kTileCols, tn, j).end - part(p.n, kTileCols, tn, j).begin);
  return task_scratch(p, rows, cols).total();
}

void run_task(const Problem& p, Range rows, Range cols, std::byte* lent) {
  if (rows.begin >= rows.end || cols.begin >= cols.end) return;
  const TaskScratch need = task_scratch(p, rows.end - rows.begin, cols.end - cols.begin);
  std::byte* base = lent;
  if (base == nullptr) {
    thread_local GrowOnlyBuffer buffer;
    base = buffer.get(need.total());
  }
  std::byte* w_buf = base;
  std::byte* a_buf = w_buf + aligned64(need.w);
  auto* partials = reinterpret_cast<float*>(a_buf + aligned64(need.a));
  const bool direct = f32_direct(p);
  const int z = zero_point(p.b.dtype);
  const bool offsets = z == 0;
  const int64_t out_es = static_cast<int64_t>(dtype_block_bytes(p.out_dtype));

  for (int64_t jc = cols.begin; jc < cols.end; jc += kColsPerBlock) {
    const int64_t nc = std::min(kColsPerBlock, cols.end - jc);
    for (int64_t pc = 0; pc < p.k; pc += kSliceK) {
      const int64_t kc = std::min(kSliceK, p.k - pc);
      const bool first = pc == 0, last = pc + kc >= p.k;
      pack_w(p, pc, kc, jc, nc, w_buf);
      for (int64_t ic = rows.begin; ic < rows.end; ic += kRowsPerBlock) {
        const int64_t mc = std::min(kRowsPerBlock, rows.end - ic);
        const QuantizedRows a = carve_quantized_rows(a_buf, mc, kc);
        quantize_rows(p, ic, mc, pc, kc, z, a);
        for (int64_t ir = 0; ir < mc; ir += kTileRows) {
          const int r = static_cast<int>(std::min<int64_t>(kTileRows, mc - ir));
          for (int64_t jr = 0; jr < nc; jr += kTileCols) {
            const int64_t width = std::min(kTileCols, nc - jr);
            const __mmask16 m0 = vec::tail_mask(width), m1 = vec::tail_mask(std::max<int64_t>(0, width - 16));
            const std::byte* strip = w_buf + jr / kTileCols * (kc / kBlock) * kStripBlockBytes;
            float* c = direct ? reinterpret_cast<float*>(p.out) + (ic + ir) * p.ldo + jc + jr
                              : partials + (ic + ir - rows.begin) * kColsPerBlock + jr;
            const int64_t ldc = direct ? p.ldo : kColsPerBlock;
            (offsets ? tile_rows<true> : tile_rows<false>)(r, a, ir, strip, kc / kBlock, c, ldc, m0, m1, !first);
          }
        }
        if (!direct && last) {  // the block's sums are final: stored as out's dtype, or given to the epilogue
          for (int64_t i = ic; i < ic + mc; ++i) {
            const float* sums = partials + (i - rows.begin) * kColsPerBlock;
            if (p.epilogue != nullptr) {
              p.epilogue->store(p.epilogue_row0 + i, jc, nc, sums);
              continue;
            }
            auto* dst = reinterpret_cast<uint16_t*>(p.out + (i * p.ldo + jc) * out_es);
            for (int64_t j = 0; j < nc; j += 16)
              vec::store_bf16(dst + j, _mm512_loadu_ps(sums + j), vec::tail_mask(nc - j));
          }
        }
      }
    }
  }
}

}  // namespace

bool int8_applies(const Problem& p) {
  if (!int8_activations() || !cpu_features().avx512_vnni) return false;
  const DType t = p.b.dtype;
  // Q6_K's 16-element sub-blocks only in the few-rows path.
  const bool format = t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q5_0 || t == DType::Q4_K ||
                      t == DType::Q5_K || (t == DType::Q6_K && int8::rows_path_applies(p));
  const bool a_ok = (p.a.dtype == DType::F32 || p.a.dtype == DType::BF16) && p.a.sk == 1;
  const bool out_ok = p.epilogue != nullptr || p.out_dtype == DType::F32 || p.out_dtype == DType::BF16;
  return format && a_ok && out_ok && p.k > 0 && p.k % kBlock == 0;
}

int64_t int8_scratch_bytes(const Problem& p) {
  if (int8::rows_path_applies(p)) return 0;  // its few quantized rows live in a thread-local buffer
  int tm = 1, tn = 1;
  grid(p, tm, tn);
  return largest_task_bytes(p, tm, tn) * tm * tn;
}

void run_int8(const Problem& p) {
  if (int8::rows_path_applies(p)) return int8::run_rows(p);
  int tm = 1, tn = 1;
  grid(p, tm, tn);
  const KernelScratch lent = bound_kernel_scratch();
  const int64_t slice = largest_task_bytes(p, tm, tn);
  std::byte* base = lent.data != nullptr && lent.bytes >= static_cast<size_t>(slice * tm * tn) ? lent.data : nullptr;
  parallel_for(tm * tn, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int i = static_cast<int>(t) / tn, j = static_cast<int>(t) % tn;
      run_task(p, part(p.m, kTileRows, tm, i), part(p.n, kTileCols, tn, j),
               base != nullptr ? base + t * slice : nullptr);
    }
  });
}

}  // namespace ltx::cpu::gemm
