// Dense 1-D convolution with bf16 weights (the vocoders' convs in production precision): per batch item, the input
// is rounded to bf16 once into a row-padded copy [C, pad + L + pad] (the padding written there, so no other padding
// copy), then either
//   - direct (stride 1, few channels: Conv1dTuning): channel pairs interleaved per position against weight pairs,
//     vdpbf16ps over a register tile of output channels × 64 positions (conv_direct below), or
//   - on our GEMM (matmul_gemm.h): chunks of output positions as out[O, n] = W[O, C·K] · col[C·K, n] with
//     col[(c, k), n] = xpad[c, n·stride + k·dilation] (rows of the padded copy, contiguous when stride is 1);
// f32 sums, bias added once, one rounding to out's dtype. The products are the same as oneDNN's f32×bf16 path (which
// reorders f32 activations to bf16 with the same round-to-nearest-even); only the summation order differs.
// Why not oneDNN: through conv_opt.cpp (one cached brgconv primitive per layer width, length and dilation: 103 for
// the LTX-2.3 vocoder) the process's anonymous memory grew by ~1.7 GB during a first vocoder call on 1 s of audio
// and not at all during a second call in the same process, so it is held per shape; 8.7 GB peak on 5 s. It also ran
// at ~50 GFLOP/s on f32 inputs (bench/vae_decode.sh, session 2).
// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/conv/conv1d_opt.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/padding.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

// Row r of x (f32 or bf16, unit stride along L) as bf16 into dst[0, pad_before + len + pad_after), the padding
// by `mode` (zeros, reflect, replicate) read from the row itself.
void pad_row_to_bf16(const std::byte* src, DType dt, int64_t len, int64_t pb, int64_t pa, PadMode mode, uint16_t* dst) {
  uint16_t* body = dst + pb;
  if (dt == DType::BF16) {
    std::memcpy(body, src, static_cast<size_t>(len) * 2);
  } else {
    const auto* f = reinterpret_cast<const float*>(src);
    int64_t i = 0;
    for (; i + 16 <= len; i += 16) vec::store_bf16(body + i, _mm512_loadu_ps(f + i), 0xffff);
    if (i < len) vec::store_bf16(body + i, vec::load_f32(f + i, vec::tail_mask(len - i)), vec::tail_mask(len - i));
  }
  for (int64_t i = 0; i < pb; ++i) {
    const int64_t s = pad_source_index(i - pb, len, mode);
    dst[i] = s < 0 ? 0 : body[s];
  }
  for (int64_t i = 0; i < pa; ++i) {
    const int64_t s = pad_source_index(len + i, len, mode);
    body[len + i] = s < 0 ? 0 : body[s];
  }
}

// Direct path for few channels (the vocoders' late stages: 16-128 channels over 10^4-10^5 positions), where the
// column matrix would be packed again for only a few output rows: channel pairs interleaved per position
// (xi[c/2][p] = x[c][p] | x[c+1][p] << 16) against weight pairs broadcast per output channel, vdpbf16ps over a tile
// of kOb output channels × 64 positions held in registers, taps and channel pairs innermost.
constexpr int kOb = 6;
constexpr int64_t kTileN = 64;

template <int OB, bool Native>
void direct_tile(const uint32_t* xi, int64_t xrow, int64_t pairs, const uint32_t* wp, int64_t taps, int64_t dil,
                 int64_t n0, int64_t nvalid, const float* bias, float* out, int64_t olen) {
  __m512 acc[OB][4];
  for (int o = 0; o < OB; ++o)
    for (int v = 0; v < 4; ++v) acc[o][v] = _mm512_setzero_ps();
  const int64_t wrow = pairs * taps;  // one output channel's weight pairs
  for (int64_t cp = 0; cp < pairs; ++cp) {
    const uint32_t* xr = xi + cp * xrow + n0;
    const uint32_t* wr = wp + cp * taps;
    for (int64_t k = 0; k < taps; ++k) {
      __m512i xv[4];
      for (int v = 0; v < 4; ++v) xv[v] = _mm512_loadu_si512(xr + k * dil + 16 * v);
      for (int o = 0; o < OB; ++o) {
        const __m512i wv = _mm512_set1_epi32(static_cast<int>(wr[o * wrow + k]));
        for (int v = 0; v < 4; ++v) acc[o][v] = vec::dpbf16<Native>(acc[o][v], xv[v], wv);
      }
    }
  }
  for (int o = 0; o < OB; ++o) {
    const __m512 b = _mm512_set1_ps(bias[o]);
    for (int v = 0; v < 4; ++v) {
      const int64_t n = 16 * v;
      if (n >= nvalid) break;
      vec::store_f32(out + o * olen + n0 + n, _mm512_add_ps(acc[o][v], b), vec::tail_mask(nvalid - n));
    }
  }
}

// out (f32, [O, olen]) from the bf16 padded rows xpad [C, padded], stride 1; Native: vdpbf16ps (vec::dpbf16).
template <bool Native>
void conv_direct(const uint16_t* xpad, int64_t chans, int64_t padded, const Tensor& w, int64_t taps, int64_t dil,
                 const float* bias, float* out, int64_t olen) {
  const int64_t o_ch = w.dim(0), pairs = (chans + 1) / 2;
  const int64_t blocks = (olen + kTileN - 1) / kTileN;
  const int64_t xrow = blocks * kTileN + (taps - 1) * dil + 16;  // every tile's loads stay inside the row
  // Kept between calls (grow-only): a fresh buffer per call costs its page faults and zeroing every time. Lanes
  // past a row's data are only ever read for positions the tile does not store, so no clearing either.
  thread_local std::vector<uint32_t> xi_buf;
  if (xi_buf.size() < static_cast<size_t>(pairs * xrow)) xi_buf.resize(static_cast<size_t>(pairs * xrow));
  uint32_t* xi = xi_buf.data();
  parallel_for(pairs, 4, [&](int64_t begin, int64_t end) {
    for (int64_t cp = begin; cp < end; ++cp) {
      const uint16_t* lo = xpad + 2 * cp * padded;
      const uint16_t* hi = 2 * cp + 1 < chans ? lo + padded : nullptr;
      uint32_t* dst = xi + cp * xrow;
      for (int64_t p = 0; p < padded; ++p) dst[p] = lo[p] | (hi != nullptr ? static_cast<uint32_t>(hi[p]) << 16 : 0u);
    }
  });
  std::vector<uint32_t> wp(static_cast<size_t>(o_ch * pairs * taps));  // [O][pair][tap]
  const auto* wb = reinterpret_cast<const uint16_t*>(w.raw());
  for (int64_t o = 0; o < o_ch; ++o)
    for (int64_t cp = 0; cp < pairs; ++cp)
      for (int64_t k = 0; k < taps; ++k) {
        const uint32_t lo = wb[(o * chans + 2 * cp) * taps + k];
        const uint32_t hi = 2 * cp + 1 < chans ? wb[(o * chans + 2 * cp + 1) * taps + k] : 0u;
        wp[static_cast<size_t>((o * pairs + cp) * taps + k)] = lo | hi << 16;
      }
  // Work items: 4 tiles of positions (256) by all output channels, so a thread's x block stays in L1/L2.
  const int64_t groups = (blocks + 3) / 4;
  parallel_for(groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g)
      for (int64_t o0 = 0; o0 < o_ch; o0 += kOb)
        for (int64_t t = g * 4; t < std::min(blocks, g * 4 + 4); ++t) {
          const int64_t n0 = t * kTileN, nvalid = std::min(kTileN, olen - n0);
          const uint32_t* wo = wp.data() + o0 * pairs * taps;
          float* oo = out + o0 * olen;
          const float* bo = bias + o0;
          switch (std::min<int64_t>(kOb, o_ch - o0)) {
            case 6:
              direct_tile<6, Native>(xi, xrow, pairs, wo, taps, dil, n0, nvalid, bo, oo, olen);
              break;
            case 5:
              direct_tile<5, Native>(xi, xrow, pairs, wo, taps, dil, n0, nvalid, bo, oo, olen);
              break;
            case 4:
              direct_tile<4, Native>(xi, xrow, pairs, wo, taps, dil, n0, nvalid, bo, oo, olen);
              break;
            case 3:
              direct_tile<3, Native>(xi, xrow, pairs, wo, taps, dil, n0, nvalid, bo, oo, olen);
              break;
            case 2:
              direct_tile<2, Native>(xi, xrow, pairs, wo, taps, dil, n0, nvalid, bo, oo, olen);
              break;
            default:
              direct_tile<1, Native>(xi, xrow, pairs, wo, taps, dil, n0, nvalid, bo, oo, olen);
              break;
          }
        }
  });
}

}  // namespace

bool try_conv1d_bf16(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out, const Conv1dTuning& tuning) {
  if (kind != OpKind::Conv || a.spatial != 1 || a.groups != 1 || in.size() < 2 || in.size() > 3) return false;
  const Tensor& x = in[0];
  const Tensor& w = in[1];
  if (x.rank() != 3 || w.rank() != 3 || w.dtype() != DType::BF16 || !w.is_contiguous()) return false;
  if (x.dtype() != DType::F32 && x.dtype() != DType::BF16) return false;
  if (out.dtype() != DType::F32 && out.dtype() != DType::BF16) return false;
  if (!out.is_contiguous() || x.strides()[2] != 1 || a.pad_mode[0] == PadMode::Constant) return false;
  if (in.size() == 3 && !dtype_is_float(in[2].dtype())) return false;
  if (!gemm::avx512_available()) return false;
  const int64_t batch = x.dim(0), chans = x.dim(1), len = x.dim(2), o_ch = w.dim(0), taps = w.dim(2);
  const int64_t stride = a.stride[0], dil = a.dilation[0], pb = a.pad_before[0], pa = a.pad_after[0];
  if (w.dim(1) != chans || out.dim(0) != batch || out.dim(1) != o_ch || pb < 0 || pa < 0) return false;
  if (a.pad_mode[0] == PadMode::Reflect && (pb >= len || pa >= len)) return false;
  const int64_t padded = len + pb + pa;
  const int64_t olen = out.dim(2);
  if (olen != (padded - dil * (taps - 1) - 1) / stride + 1 || olen <= 0) return false;

  const int64_t k_total = chans * taps;
  // Output positions per GEMM: the whole row when its columns stay within tuning.max_col_bytes, else chunks of that
  // size (multiples of 64); the weights are packed once per chunk.
  const int64_t max_cols = std::max<int64_t>(64, tuning.max_col_bytes / (k_total * 2) / 64 * 64);
  const int64_t chunk = std::min(olen, max_cols);
  thread_local std::vector<uint16_t> xpad_buf;  // grow-only, as conv_direct's
  if (xpad_buf.size() < static_cast<size_t>(chans * padded)) xpad_buf.resize(static_cast<size_t>(chans * padded));
  uint16_t* xpad = xpad_buf.data();
  const bool direct = stride == 1 && chans <= tuning.direct_max_channels;
  static const bool native = cpu_features().avx512_bf16;
  std::vector<uint16_t> col(direct ? 0 : static_cast<size_t>(k_total * chunk));
  std::vector<float> acc(out.dtype() == DType::F32 ? 0 : static_cast<size_t>(o_ch * (direct ? olen : chunk)));
  std::vector<float> bias(static_cast<size_t>(o_ch), 0.0f);
  if (in.size() == 3) {
    const Tensor& b = in[2];
    const auto bes = static_cast<int64_t>(dtype_block_bytes(b.dtype()));
    for (int64_t o = 0; o < o_ch; ++o)
      bias[static_cast<size_t>(o)] = load_as_f32(b.raw() + o * b.strides()[0] * bes, b.dtype());
  }
  const auto xes = static_cast<int64_t>(dtype_block_bytes(x.dtype()));
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  for (int64_t bi = 0; bi < batch; ++bi) {
    parallel_for(chans, 16, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        pad_row_to_bf16(x.raw() + (bi * x.strides()[0] + c * x.strides()[1]) * xes, x.dtype(), len, pb, pa,
                        a.pad_mode[0], xpad + c * padded);
    });
    if (direct) {
      float* dst = out.dtype() == DType::F32 ? reinterpret_cast<float*>(out.raw()) + bi * o_ch * olen : acc.data();
      (native ? conv_direct<true> : conv_direct<false>)(xpad, chans, padded, w, taps, dil, bias.data(), dst, olen);
      if (out.dtype() != DType::F32) {
        auto* o16 = reinterpret_cast<uint16_t*>(out.raw()) + bi * o_ch * olen;
        for (int64_t i = 0; i < o_ch * olen; i += 16)
          vec::store_bf16(o16 + i, vec::load_f32(acc.data() + i, vec::tail_mask(o_ch * olen - i)),
                          vec::tail_mask(o_ch * olen - i));
      }
      continue;
    }
    for (int64_t n0 = 0; n0 < olen; n0 += chunk) {
      const int64_t nc = std::min(chunk, olen - n0);
      parallel_for(k_total, 16, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t c = row / taps, k = row % taps;
          const uint16_t* src = xpad + c * padded + n0 * stride + k * dil;
          uint16_t* dst = col.data() + row * nc;
          if (stride == 1) {
            std::memcpy(dst, src, static_cast<size_t>(nc) * 2);
          } else {
            for (int64_t n = 0; n < nc; ++n) dst[n] = src[n * stride];
          }
        }
      });
      gemm::Problem p;
      p.m = o_ch, p.n = nc, p.k = k_total;
      p.a = {w.raw(), DType::BF16, k_total, 1};
      p.b.data = reinterpret_cast<const std::byte*>(col.data()), p.b.dtype = DType::BF16, p.b.sk = nc, p.b.sn = 1;
      p.compute = gemm::Compute::BF16;
      p.out_dtype = DType::F32;
      float* dst_f32 =
          out.dtype() == DType::F32 ? reinterpret_cast<float*>(out.raw()) + (bi * o_ch * olen + n0) : acc.data();
      p.out = reinterpret_cast<std::byte*>(dst_f32);
      p.ldo = out.dtype() == DType::F32 ? olen : nc;
      gemm::run_avx512(p);
      parallel_for(o_ch, 16, [&](int64_t begin, int64_t end) {  // bias and the one rounding to out's dtype
        for (int64_t o = begin; o < end; ++o) {
          float* row = dst_f32 + o * p.ldo;
          const __m512 bv = _mm512_set1_ps(bias[static_cast<size_t>(o)]);
          std::byte* orow = out.raw() + ((bi * o_ch + o) * olen + n0) * oes;
          for (int64_t n = 0; n < nc; n += 16) {
            const __mmask16 m = vec::tail_mask(nc - n);
            const __m512 v = _mm512_add_ps(vec::load_f32(row + n, m), bv);
            if (out.dtype() == DType::F32)
              vec::store_f32(row + n, v, m);
            else
              vec::store_bf16(reinterpret_cast<uint16_t*>(orow) + n, v, m);
          }
        }
      });
    }
  }
  return true;
}

}  // namespace ltx::cpu::opt
