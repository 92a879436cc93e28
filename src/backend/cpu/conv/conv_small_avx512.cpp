// Direct convolution for small calls (conv_small.h). oneDNN's brgconv builds a JIT kernel per shape on its first
// call; on small calls that costs far more than the call: e.g. a 2->2 channel, 11-tap 1-D conv over 16560 samples
// (1.5 MFLOP) takes 16-23 ms to create and 0.1 ms to run, and the embedded default model's one generation creates
// 84 such primitives (0.41 s of its 0.75 s in conv on the first generation, ONEDNN_VERBOSE).
//
// Method: x is copied once into an f32 buffer with its padding written out (every pad mode; rounded to bf16 when
// the weights are bf16), the weights into f32 blocks [O/OB][C/G·taps][OB]; then each task computes OB output
// channels × one output row (16-wide vectors along the last dim) with the reduction innermost, OB accumulators per
// vector in registers, one load of x feeding OB fused multiply-adds. The reduction runs over channels, then taps
// row-major, starting from the bias: the reference's order (conv_ref.cpp).
//
// Cost rule (small_conv_weights_fit): at most 16K weights (O · C/G · taps: the multiply-adds per output position),
// whatever the input's size. The rule looks at the weights alone so that every piece of a split decode (batch items,
// temporal windows, spatial tiles: video_vae_plan) takes the same path as the whole decode, which keeps chunked
// decodes bit-identical to it and tile interiors equal to it; a rule on the call's total work sent small windows here
// and the whole decode to oneDNN. The shapes the bound was set on (the embedded default model's), measured with
// bench_conv_small (Zen 4, 2 threads, production precision, ms, load ~3; first call / median of 15 later calls):
//   shape                              MMAC   oneDNN first/later   here first/later
//   1-D 2->2 ch, 16560 samples, k 11   0.73     18.2 / 0.08         0.22 / 0.16
//   1-D 8->8 ch, 4140 samples, k 7     1.85      4.6 / 0.06         0.09 / 0.08
//   1-D 128->32 ch, 138 samples, k 7   3.96      0.95 / 0.05        0.49 / 0.09
//   3-D 8->16 @ 3x4x6                  0.25      0.39 / 0.03        0.06 / 0.02
//   3-D 4->8 @ 17x16x24                5.64      0.78 / 0.14        0.17 / 0.15
//   3-D 8->64 @ 5x8x12                 6.64      0.90 / 0.07        0.30 / 0.12
//   3-D 32->32 @ 5x16x24 (not taken)  53.1       1.04 / 0.31        1.28 / 0.97
// (weights: 44, 392, 28672, 3456, 864, 13824, 27648.) Up to 16K weights the first call is 2-200x cheaper here and
// later calls cost about the same (within ~0.05 ms); the 32->32 conv, with more weights, runs 3x faster per call on
// oneDNN, whose JIT cost is then small next to the calls; the 1-D 128->32 conv (0.4 ms saved once) goes to oneDNN too.
// The copy of the padded input this kernel makes grows with the input: small_conv_workspace_bytes bounds it. The LTX
// VAEs and vocoders at real widths are far above the bound, so only small models (the embedded default) take this path.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/cpu/conv/conv_small.h"
#include "backend/cpu/kernel_scratch.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/padding.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

constexpr int64_t kChunk = 256;  // outputs along the last dim per task: 16 vectors
// The cost rule's bounds (see the top of this file).
constexpr int64_t kMaxWeights = 16 * 1024;

struct Geometry {  // right-aligned to 3 spatial dims (outer dims of size 1 for 1-D and 2-D)
  int64_t batch = 1, chans = 1, outs = 1, groups = 1, cg = 1, og = 1;
  std::array<int64_t, 3> x{1, 1, 1}, k{1, 1, 1}, o{1, 1, 1}, xp{1, 1, 1};  // input, kernel, output, padded input
  std::array<int64_t, 3> stride{1, 1, 1}, dil{1, 1, 1}, pb{0, 0, 0};
  std::array<PadMode, 3> mode{PadMode::Zeros, PadMode::Zeros, PadMode::Zeros};
  int64_t taps() const { return k[0] * k[1] * k[2]; }
  int64_t positions() const { return o[0] * o[1] * o[2]; }
};

Geometry geometry_of(const ConvAttrs& a, Inputs in, const Tensor& out) {
  Geometry g;
  const int sp = a.spatial;
  g.batch = in[0].dim(0), g.chans = in[0].dim(1), g.outs = out.dim(1), g.groups = a.groups;
  g.cg = in[1].dim(1), g.og = in[1].dim(0) / a.groups;
  for (int d = 0; d < sp; ++d) {
    const auto i = static_cast<size_t>(3 - sp + d), s = static_cast<size_t>(d);
    g.x[i] = in[0].dim(2 + d), g.k[i] = in[1].dim(2 + d), g.o[i] = out.dim(2 + d);
    g.stride[i] = a.stride[s], g.dil[i] = a.dilation[s], g.pb[i] = a.pad_before[s], g.mode[i] = a.pad_mode[s];
    g.xp[i] = g.x[i] + a.pad_before[s] + a.pad_after[s];
  }
  return g;
}

// xp[b, c, *padded] in f32, every pad mode written out; rounded to bf16 when `round_bf16`.
size_t padded_input_floats(const Geometry& g) {
  return static_cast<size_t>(g.batch * g.chans * g.xp[0] * g.xp[1] * g.xp[2]);
}

// x padded into xp (padded_input_floats(g) floats).
void pad_input(const Tensor& x, const Geometry& g, bool round_bf16, float* xp) {
  const int sp = x.rank() - 2;
  std::array<int64_t, 3> xs{0, 0, 0};
  for (int d = 0; d < sp; ++d) xs[static_cast<size_t>(3 - sp + d)] = x.strides()[2 + d];
  const auto es = static_cast<int64_t>(dtype_block_bytes(x.dtype()));
  const int64_t rows = g.batch * g.chans * g.xp[0] * g.xp[1];
  parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> col(static_cast<size_t>(g.xp[2]));  // source element offset per padded column, -1: zero
    for (int64_t w = 0; w < g.xp[2]; ++w) {
      const int64_t s = pad_source_index(w - g.pb[2], g.x[2], g.mode[2]);
      col[static_cast<size_t>(w)] = s < 0 ? -1 : s * xs[2];
    }
    for (int64_t r = begin; r < end; ++r) {
      const int64_t h = r % g.xp[1], d = (r / g.xp[1]) % g.xp[0], bc = r / (g.xp[1] * g.xp[0]);
      const int64_t b = bc / g.chans, c = bc % g.chans;
      float* dst = xp + r * g.xp[2];
      const int64_t sd = pad_source_index(d - g.pb[0], g.x[0], g.mode[0]);
      const int64_t sh = pad_source_index(h - g.pb[1], g.x[1], g.mode[1]);
      if (sd < 0 || sh < 0) {
        std::fill(dst, dst + g.xp[2], 0.0f);
        continue;
      }
      const std::byte* src = x.raw() + (b * x.strides()[0] + c * x.strides()[1] + sd * xs[0] + sh * xs[1]) * es;
      for (int64_t w = 0; w < g.xp[2]; ++w) {
        const int64_t off = col[static_cast<size_t>(w)];
        const float v = off < 0 ? 0.0f : load_as_f32(src + off * es, x.dtype());
        dst[w] = round_bf16 ? bf16_to_f32(f32_to_bf16(v)) : v;
      }
    }
  });
}

struct Block {  // OB output channels o0 .. o0 + ob of one group, weights at packed + offset as [cg·taps][ob]
  int64_t group, o0, ob, offset;
};

// OB output channels for `count` outputs along the last dim starting at xbase (already at the task's position):
// dst[j][i] = bias[j] + Σ_r w[r][j] · xbase[off[r] + i·stride].
template <int OB>
void block_row(const float* xbase, const int64_t* off, int64_t nr, const float* w, const float* bias, int64_t count,
               int64_t stride, float* const* dst) {
  const __m512i lanes = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(static_cast<int>(stride)));
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = count - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (count - i)) - 1u);
    __m512 acc[OB];
    for (int j = 0; j < OB; ++j) acc[j] = _mm512_set1_ps(bias[j]);
    const float* xi = xbase + i * stride;
    const float* wr = w;
    if (stride == 1) {
      for (int64_t r = 0; r < nr; ++r, wr += OB) {
        const __m512 xv = _mm512_maskz_loadu_ps(m, xi + off[r]);
        for (int j = 0; j < OB; ++j) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(wr[j]), xv, acc[j]);
      }
    } else {
      for (int64_t r = 0; r < nr; ++r, wr += OB) {
        const __m512 xv = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lanes, xi + off[r], 4);
        for (int j = 0; j < OB; ++j) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(wr[j]), xv, acc[j]);
      }
    }
    for (int j = 0; j < OB; ++j) _mm512_mask_storeu_ps(dst[j] + i, m, acc[j]);
  }
}

using BlockRowFn = void (*)(const float*, const int64_t*, int64_t, const float*, const float*, int64_t, int64_t,
                            float* const*);

BlockRowFn block_row_for(int64_t ob) {
  switch (ob) {
    case 8:
      return block_row<8>;
    case 4:
      return block_row<4>;
    case 2:
      return block_row<2>;
    default:
      return block_row<1>;
  }
}

// The weights in f32 blocks of up to 8 output channels (packed[offset + r·ob + j] = w[o0 + j, r]) and the bias in
// f32: made on a plan step's first run and kept in its slot (kernels.h PreparedWeights), bound to the tensors'
// identity.
struct PackedSmallConv final : PreparedWeights {
  const std::byte* weights_src = nullptr;
  const std::byte* bias_src = nullptr;
  Shape weights_shape;
  std::vector<int64_t> weights_strides;
  DType weights_dtype = DType::F32, bias_dtype = DType::F32;
  int64_t groups = 1;
  std::vector<Block> blocks;
  std::vector<float> packed, bias;

  bool made_from(const ConvAttrs& a, Inputs in) const {
    const Tensor& w = in[1];
    const std::byte* b = in.size() == 3 ? in[2].raw() : nullptr;
    return weights_src == w.raw() && bias_src == b && weights_shape == w.shape() && weights_dtype == w.dtype() &&
           groups == a.groups && std::equal(weights_strides.begin(), weights_strides.end(), w.strides().begin()) &&
           (b == nullptr || bias_dtype == in[2].dtype());
  }
};

std::shared_ptr<PackedSmallConv> pack_weights(const ConvAttrs& a, Inputs in, const Geometry& g) {
  auto p = std::make_shared<PackedSmallConv>();
  const Tensor& w = in[1];
  p->weights_src = w.raw();
  p->bias_src = in.size() == 3 ? in[2].raw() : nullptr;
  p->weights_shape = w.shape();
  p->weights_strides.assign(w.strides().begin(), w.strides().begin() + w.rank());
  p->weights_dtype = w.dtype();
  p->bias_dtype = in.size() == 3 ? in[2].dtype() : DType::F32;
  p->groups = a.groups;
  const int64_t nr = g.cg * g.taps();
  int64_t size = 0;
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t o0 = 0; o0 < g.og;) {
      const int64_t left = g.og - o0, ob = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
      p->blocks.push_back({group, group * g.og + o0, ob, size});
      size += nr * ob;
      o0 += ob;
    }
  p->packed.resize(static_cast<size_t>(size));
  const auto wes = static_cast<int64_t>(dtype_block_bytes(w.dtype()));
  const int sp = a.spatial;
  for (const Block& blk : p->blocks)
    for (int64_t j = 0; j < blk.ob; ++j)
      for (int64_t r = 0; r < nr; ++r) {
        const int64_t c = r / g.taps(), t = r % g.taps();
        const int64_t k3[3] = {t / (g.k[1] * g.k[2]), (t / g.k[2]) % g.k[1], t % g.k[2]};
        int64_t off = (blk.o0 + j) * w.strides()[0] + c * w.strides()[1];
        for (int d = 0; d < sp; ++d) off += k3[3 - sp + d] * w.strides()[2 + d];
        p->packed[static_cast<size_t>(blk.offset + r * blk.ob + j)] = load_as_f32(w.raw() + off * wes, w.dtype());
      }
  p->bias.assign(static_cast<size_t>(g.outs), 0.0f);
  if (in.size() == 3) {
    const auto bes = static_cast<int64_t>(dtype_block_bytes(in[2].dtype()));
    for (int64_t o = 0; o < g.outs; ++o)
      p->bias[static_cast<size_t>(o)] = load_as_f32(in[2].raw() + o * in[2].strides()[0] * bes, in[2].dtype());
  }
  return p;
}

}  // namespace

bool small_conv_supports(const ConvAttrs& a, Inputs in, const Tensor& out) {
  if (in.size() < 2 || in.size() > 3 || a.spatial < 1 || a.spatial > 3 || !out.is_contiguous()) return false;
  const DType xt = in[0].dtype(), wt = in[1].dtype(), ot = out.dtype();
  const auto f32_or_bf16 = [](DType t) { return t == DType::F32 || t == DType::BF16; };
  if (!f32_or_bf16(xt) || !f32_or_bf16(wt) || !f32_or_bf16(ot) || (xt == DType::BF16 && wt == DType::F32)) return false;
  if (in.size() == 3 && !dtype_is_float(in[2].dtype())) return false;
  for (int d = 0; d < a.spatial; ++d)  // gather indices are 32-bit lanes
    if (a.stride[static_cast<size_t>(d)] * 16 > (int64_t{1} << 30)) return false;
  return gemm::avx512_available();
}

bool small_conv_weights_fit(const Shape& w) { return w.numel() <= kMaxWeights; }

bool small_conv_applies(const ConvAttrs& a, Inputs in, const Tensor& out) {
  return small_conv_weights_fit(in[1].shape()) && small_conv_supports(a, in, out);
}

size_t small_conv_scratch_bytes(const ConvAttrs& a, const Shape& x) {
  Shape padded = x;  // padded on every side: at least what pad_input writes
  for (int d = 0; d < a.spatial; ++d)
    padded[2 + d] += a.pad_before[static_cast<size_t>(d)] + a.pad_after[static_cast<size_t>(d)];
  return static_cast<size_t>(padded.numel()) * sizeof(float);
}

size_t small_conv_workspace_bytes(const ConvAttrs& a, const Shape& x, const Shape& w, const Shape& out) {
  return small_conv_scratch_bytes(a, x) + static_cast<size_t>(w.numel() + out[1]) * sizeof(float);
}

void run_small_conv(const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared) {
  const Geometry g = geometry_of(a, in, out);
  const bool round_bf16 = in[1].dtype() == DType::BF16;
  // The padded input in the scratch the plan lent this step (small_conv_scratch_bytes) when it is there.
  const KernelScratch lent = bound_kernel_scratch();
  const size_t xp_floats = padded_input_floats(g);
  std::vector<float> owned(lent.bytes >= xp_floats * sizeof(float) ? 0 : xp_floats);
  float* const xp = owned.empty() ? reinterpret_cast<float*>(lent.data) : owned.data();
  pad_input(in[0], g, round_bf16, xp);
  std::shared_ptr<PackedSmallConv> fresh;
  const auto* weights = prepared != nullptr ? dynamic_cast<const PackedSmallConv*>(prepared->get()) : nullptr;
  if (weights == nullptr || !weights->made_from(a, in)) {
    fresh = pack_weights(a, in, g);
    weights = fresh.get();
    if (prepared != nullptr) *prepared = fresh;
  }
  const std::vector<Block>& blocks = weights->blocks;
  const std::vector<float>& packed = weights->packed;
  const std::vector<float>& bias = weights->bias;
  const int64_t nr = g.cg * g.taps();

  // Offset of each reduction index r = (c, kd, kh, kw) in xp, relative to the task's first input element.
  const int64_t row = g.xp[2], plane = g.xp[1] * g.xp[2], chan = g.xp[0] * plane;
  std::vector<int64_t> off(static_cast<size_t>(nr));
  for (int64_t r = 0; r < nr; ++r) {
    const int64_t c = r / g.taps(), t = r % g.taps();
    const int64_t kd = t / (g.k[1] * g.k[2]), kh = (t / g.k[2]) % g.k[1], kw = t % g.k[2];
    off[static_cast<size_t>(r)] = c * chan + kd * g.dil[0] * plane + kh * g.dil[1] * row + kw * g.dil[2];
  }

  const int64_t chunks = (g.o[2] + kChunk - 1) / kChunk;
  const int64_t nblocks = static_cast<int64_t>(blocks.size());
  const int64_t tasks = g.batch * nblocks * g.o[0] * g.o[1] * chunks;
  const bool f32_out = out.dtype() == DType::F32;
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  // About 64 K multiply-adds per parallel_for piece at least, so tiny calls stay on one thread.
  const int64_t per_task = std::max<int64_t>(1, std::min(kChunk, g.o[2]) * nr * 8);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / per_task);
  parallel_for(tasks, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> staging(f32_out ? 0 : static_cast<size_t>(8 * kChunk));
    for (int64_t t = begin; t < end; ++t) {
      int64_t rem = t;
      const int64_t chunk = rem % chunks;
      rem /= chunks;
      const int64_t oh = rem % g.o[1];
      rem /= g.o[1];
      const int64_t od = rem % g.o[0];
      rem /= g.o[0];
      const Block& blk = blocks[static_cast<size_t>(rem % nblocks)];
      const int64_t b = rem / nblocks;
      const int64_t ow0 = chunk * kChunk, count = std::min(kChunk, g.o[2] - ow0);
      const float* xbase = xp + (b * g.chans + blk.group * g.cg) * chan + od * g.stride[0] * plane +
                           oh * g.stride[1] * row + ow0 * g.stride[2];
      float* dst[8];
      const int64_t out_row = ((b * g.outs + blk.o0) * g.o[0] + od) * g.o[1] + oh;  // row of output channel o0
      for (int64_t j = 0; j < blk.ob; ++j)
        dst[j] =
            f32_out ? out.data<float>() + (out_row + j * g.o[0] * g.o[1]) * g.o[2] + ow0 : staging.data() + j * kChunk;
      block_row_for(blk.ob)(xbase, off.data(), nr, packed.data() + blk.offset, bias.data() + blk.o0, count, g.stride[2],
                            dst);
      if (!f32_out)
        for (int64_t j = 0; j < blk.ob; ++j) {
          std::byte* o = out.raw() + ((out_row + j * g.o[0] * g.o[1]) * g.o[2] + ow0) * oes;
          for (int64_t i = 0; i < count; ++i) store_from_f32(o + i * oes, out.dtype(), dst[j][i]);
        }
    }
  });
}

}  // namespace ltx::cpu::opt
