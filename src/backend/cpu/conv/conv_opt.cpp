// opt::try_conv: Conv (1-3 spatial dims, strides, dilation, groups, every pad mode) and dense ConvTranspose1d.
// Paths, in the order the Auto rule tries them:
//   - depthwise 1-D (groups = channels): a per-row kernel (memory-bound, no GEMM);
//   - small convs (weights of at most 16K elements, kMaxWeights): conv_small_avx512.cpp, no JIT to build (first-call
//     latency);
//   - groups 1: oneDNN on channels-last slabs (conv_onednn_slabs below): the input packed per slab of the
//     outermost spatial dim into nwc/nhwc/ndhwc in the weights' dtype (f32 activations rounded to bf16 once, as the
//     production policy wants) by our AVX-512 transposition, brgconv reading and writing channels-last with no
//     reorder of its own, the output transposed back into its planes; weights converted per output-channel chunk
//     (or kept per plan step). Its own memory is bounded (conv_workspace_bytes) whatever the tensor sizes;
//   - otherwise (groups > 1, or no channels-last primitive): oneDNN on whole tensors in its preferred blocked
//     layouts ("any"), src, weights and dst reordered on every call, Reflect/Replicate padding materialized first;
//   - im2col over our own GEMM (matmul_gemm.h) only where oneDNN offers no primitive for the call;
//   - ConvTranspose1d (the vocoders' upsampling): oneDNN's deconvolution on whole tensors.
// Measured (Zen 4, 2 threads, f32 activations x bf16 weights, 3x3x3 with replicate in time, one shape per
// LTX-2.3 decoder stage at 5 frames; CPU seconds per call at load ~5, the steadier figure on a shared machine):
//   shape (C->O @ T×H×W)     whole tensors   slabs   (same output bits: both round the input to bf16 once)
//   1024->4096 @ 3×16×24       0.92 s          0.78 s
//    512->512  @ 5×64×96       1.28 s          1.15 s
//    256->256  @ 5×64×96       0.28 s          0.26 s
//    128->128  @ 5×128×192     0.33 s          0.26 s
//    128->48   @ 5×128×192     0.19 s          0.12 s
// and the call's own memory goes from whole copies (input padded and reordered, output reordered: ~0.5 GB at the
// decoder's last stage) to 24-46 MB. Earlier measurements put im2col at 5-60 GFLOP/s against oneDNN's 43-135 on
// these shapes, hence its last place.
#include "backend/cpu/conv/conv_opt.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "backend/cpu/conv/conv_direct.h"
#include "backend/cpu/conv/conv_layout.h"
#include "backend/cpu/conv/conv_small.h"
#include "backend/cpu/kernel_scratch.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/onednn_engine.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/padding.h"
#include "backend/cpu/primitive_cache.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

namespace ltx::cpu::opt {
namespace {

bool pads_with_data(const ConvAttrs& a, int d) {
  const auto i = static_cast<size_t>(d);
  return (a.pad_mode[i] == PadMode::Reflect || a.pad_mode[i] == PadMode::Replicate) &&
         (a.pad_before[i] > 0 || a.pad_after[i] > 0);
}

// x with the Reflect/Replicate padding of `a` written out (a contiguous copy); zero-padded dims stay unpadded.
Tensor materialize_padding(const Tensor& x, const ConvAttrs& a) {
  const int sp = a.spatial;
  Shape shape{x.dim(0), x.dim(1)};
  int64_t before[3] = {}, n[3] = {};
  for (int d = 0; d < sp; ++d) {
    const auto i = static_cast<size_t>(d);
    before[d] = pads_with_data(a, d) ? a.pad_before[i] : 0;
    n[d] = x.dim(2 + d);
    shape.push_back(n[d] + before[d] + (pads_with_data(a, d) ? a.pad_after[i] : 0));
  }
  Tensor xp = Tensor::empty(x.dtype(), shape);
  const auto es = static_cast<int64_t>(dtype_block_bytes(x.dtype()));
  const int64_t last = shape[shape.rank() - 1];
  const int64_t rows = xp.numel() / last;
  const int ld = sp - 1;
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> src_last(static_cast<size_t>(last));
    for (int64_t w = 0; w < last; ++w)
      src_last[static_cast<size_t>(w)] = pad_source_index(w - before[ld], n[ld], a.pad_mode[static_cast<size_t>(ld)]);
    for (int64_t r = begin; r < end; ++r) {
      int64_t rem = r, off = 0;  // r indexes [B, C, *S'[:-1]]
      for (int d = shape.rank() - 2; d >= 0; --d) {
        const int64_t idx = rem % shape[d];
        rem /= shape[d];
        const int64_t src =
            d >= 2 ? pad_source_index(idx - before[d - 2], n[d - 2], a.pad_mode[static_cast<size_t>(d - 2)]) : idx;
        off += src * x.strides()[d];
      }
      std::byte* dst = xp.raw() + r * last * es;
      const int64_t ls = x.strides()[shape.rank() - 1];
      if (ls == 1 && before[ld] == 0 && last == n[ld]) {  // the row as it lies (no data padding in the last dim)
        std::memcpy(dst, x.raw() + off * es, static_cast<size_t>(last * es));
        continue;
      }
      for (int64_t w = 0; w < last; ++w)
        std::memcpy(dst + w * es, x.raw() + (off + src_last[static_cast<size_t>(w)] * ls) * es,
                    static_cast<size_t>(es));
    }
  });
  return xp;
}

// ---------------------------------------------------------------------------------------------------------------
// (a) oneDNN

using dims = dnnl::memory::dims;

// A primitive cache's key: `head` (what selects the kind and types), then every dims list, each ended by '|'.
std::string primitive_key(std::string head, std::initializer_list<const dims*> parts) {
  for (const dims* v : parts) {
    head += '|';
    for (int64_t e : *v) head += std::to_string(e) + ',';
  }
  return head;
}

// Primitives kept per kernel kind: the video decoder uses ~20 shapes, a tiled or chunked decode a few times
// that (edge tiles and chunks have their own shapes).
constexpr size_t kPrimitiveCacheCapacity = 128;

dnnl::engine& engine() { return onednn_engine(); }

dnnl::memory::format_tag plain_tag(int rank) {
  using tag = dnnl::memory::format_tag;
  switch (rank) {
    case 1:
      return tag::a;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    default:
      return tag::abcdef;
  }
}

struct OnednnConv {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  dnnl::memory::desc x_user, w_user, y_user, b_user;
};

std::shared_ptr<OnednnConv> onednn_primitive(const ConvAttrs& a, const Tensor& x, const Tensor& w, bool bias,
                                             const Tensor& out, const int64_t* pad_l, const int64_t* pad_r) {
  // Computed in the weights' dtype: an f32 input is converted by the reorder into the primitive's layout (bf16
  // weights and activations, f32 accumulation and output: the production policy); the output keeps out's dtype.
  const auto dt = w.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const auto xt = x.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const auto yt = out.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const int sp = a.spatial;
  dims xd, wd, yd, stride, dilate, pl, pr;
  for (int i = 0; i < x.rank(); ++i) xd.push_back(x.dim(i));
  for (int i = 0; i < out.rank(); ++i) yd.push_back(out.dim(i));
  if (a.groups > 1) wd.push_back(a.groups);
  wd.push_back(w.dim(0) / a.groups);
  for (int i = 1; i < w.rank(); ++i) wd.push_back(w.dim(i));
  for (int d = 0; d < sp; ++d) {
    const auto i = static_cast<size_t>(d);
    stride.push_back(a.stride[i]);
    dilate.push_back(a.dilation[i] - 1);
    pl.push_back(pad_l[d]);
    pr.push_back(pad_r[d]);
  }
  const std::string key = primitive_key(std::to_string(static_cast<int>(dt)) + std::to_string(static_cast<int>(xt)) +
                                            std::to_string(static_cast<int>(yt)) + (bias ? "b" : "n"),
                                        {&xd, &wd, &yd, &stride, &dilate, &pl, &pr});
  static PrimitiveCache<std::string, OnednnConv> cache(kPrimitiveCacheCapacity);
  return cache.get(key, [&] {
    auto c = std::make_shared<OnednnConv>();
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc x_any(xd, dt, tag::any), w_any(wd, dt, tag::any), y_any(yd, yt, tag::any);
    c->x_user = dnnl::memory::desc(xd, xt, plain_tag(static_cast<int>(xd.size())));
    c->w_user = dnnl::memory::desc(wd, dt, plain_tag(static_cast<int>(wd.size())));
    c->y_user = dnnl::memory::desc(yd, yt, plain_tag(static_cast<int>(yd.size())));
    c->b_user = dnnl::memory::desc(dims{out.dim(1)}, dnnl::memory::data_type::f32, tag::a);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-call scratchpads: safe from several threads
    const auto desc =
        bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               x_any, w_any, c->b_user, y_any, stride, dilate, pl, pr)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               x_any, w_any, y_any, stride, dilate, pl, pr);
    c->pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine());
    c->conv = dnnl::convolution_forward(c->pd);
    return c;
  });
}

// A conv step's weights in the layout its primitive wants and its bias in f32, made on the step's first run
// (kernels.h PreparedWeights). `weights_src`/`bias_src` are the identity it was made from.
struct PreparedOnednnConv final : PreparedWeights {
  std::shared_ptr<OnednnConv> primitive;
  const std::byte* weights_src = nullptr;
  const std::byte* bias_src = nullptr;
  Tensor plain;          // the weights as given (contiguous): `weights` may point into it when no reorder is needed
  dnnl::memory weights;  // in pd.weights_desc()
  Tensor bias;           // f32
};

void conv_onednn(const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared) {
  Tensor x = in[0];
  int64_t pad_l[3] = {}, pad_r[3] = {};
  bool materialize = false;
  for (int d = 0; d < a.spatial; ++d) {
    materialize |= pads_with_data(a, d);
    pad_l[d] = pads_with_data(a, d) ? 0 : a.pad_before[static_cast<size_t>(d)];
    pad_r[d] = pads_with_data(a, d) ? 0 : a.pad_after[static_cast<size_t>(d)];
  }
  x = materialize ? materialize_padding(x, a) : x.contiguous();
  const bool has_bias = in.size() == 3;
  const auto c = onednn_primitive(a, x, in[1], has_bias, out, pad_l, pad_r);

  auto& eng = engine();
  dnnl::stream st(eng);
  auto as_prim = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& want, void* data) {
    dnnl::memory u(user, eng, data);
    if (user == want) return u;
    dnnl::memory m(want, eng);
    dnnl::reorder(u, m).execute(st, u, m);
    return m;
  };
  // Weights and bias: from the step's prepared slot when it holds them for these very tensors and this primitive,
  // else converted now (and kept in the slot when the plan offers one).
  const std::byte* bias_src = has_bias ? in[2].raw() : nullptr;
  std::shared_ptr<PreparedOnednnConv> fresh;
  const auto* ready = prepared != nullptr ? dynamic_cast<const PreparedOnednnConv*>(prepared->get()) : nullptr;
  if (ready == nullptr || ready->primitive != c || ready->weights_src != in[1].raw() || ready->bias_src != bias_src) {
    fresh = std::make_shared<PreparedOnednnConv>();
    fresh->primitive = c;
    fresh->weights_src = in[1].raw();
    fresh->bias_src = bias_src;
    fresh->plain = in[1].contiguous();
    fresh->weights = as_prim(c->w_user, c->pd.weights_desc(), fresh->plain.raw());
    if (fresh->weights.get_data_handle() != fresh->plain.raw()) fresh->plain = Tensor();  // reordered: not needed
    fresh->bias = has_bias ? in[2].to(DType::F32).contiguous() : Tensor();
    ready = fresh.get();
    if (prepared != nullptr) *prepared = fresh;
  }

  dnnl::memory xm = as_prim(c->x_user, c->pd.src_desc(), x.raw());
  dnnl::memory yu(c->y_user, eng, out.raw());
  dnnl::memory ym = c->pd.dst_desc() == c->y_user ? yu : dnnl::memory(c->pd.dst_desc(), eng);
  dnnl::memory scratch(c->pd.scratchpad_desc(), eng);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, ready->weights}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scratch}};
  if (has_bias) args[DNNL_ARG_BIAS] = dnnl::memory(c->b_user, eng, ready->bias.raw());
  c->conv.execute(st, args);
  if (ym != yu) dnnl::reorder(ym, yu).execute(st, ym, yu);
  st.wait();
}

// oneDNN on slabs: the conv in oneDNN's channels-last layout (nwc / nhwc / ndhwc: brgconv reads and writes it as
// it lies), over slabs of the outermost spatial dim (time for the video VAE). Per slab, the input rows the slab's
// outputs read are put channels-last in the weights' dtype (f32 -> bf16 rounds to nearest even, as oneDNN's
// reorder did, so the output bits are those of the whole-tensor path): contiguous f32 planes by our AVX-512
// transposition (conv_layout_avx512.cpp), other inputs by oneDNN reorders of runs of rows, and inputs with
// Reflect/Replicate padding in an inner dim by pack_rows, which writes that padding. The outermost dim's padding
// of any mode is written as rows (replicated frames are the source row packed again, never a copy of the whole
// tensor); consecutive stride-1 slabs share k-1 rows, which move to the buffer's front instead of being packed
// again. The primitive writes the slab's outputs channels-last and a transposition puts them into `out` (NC...).
// Output channels are taken in chunks whose weights are at most weight_chunk_limit, converted to oneDNN's layout
// per chunk (or kept per plan step in `prepared`). So the call's own memory is bounded (conv_workspace_bytes)
// whatever the tensor sizes.

std::atomic<size_t> slab_limit{size_t{24} << 20};          // input + output slab
std::atomic<size_t> weight_chunk_limit{size_t{24} << 20};  // one chunk of weights in oneDNN's layout
constexpr size_t kScratchpadAllowance = size_t{1} << 20;   // brgconv's scratchpad: measured 12 KiB on VAE shapes

struct SlabGeometry {
  int sp = 0;
  int64_t chans = 0, outs = 0, in0 = 0, out0 = 0;
  int64_t k0 = 1, s0 = 1, d0 = 1, pb0 = 0;
  int64_t in_inner = 1, out_inner = 1, taps = 1;  // positions per index of dim 0 (input: with materialized pads)
  int64_t padded[3] = {1, 1, 1};                  // input dims 1.. as packed (data pads written out)
  int64_t ts = 1, oc = 1;                         // output slab height, output-channel chunk
  size_t src_es = 4, dst_es = 4, w_es = 4;
  int64_t src_rows(int64_t t) const { return (t - 1) * s0 + (k0 - 1) * d0 + 1; }
  size_t src_bytes() const { return static_cast<size_t>(src_rows(ts) * in_inner * chans) * src_es; }
  size_t dst_bytes() const { return static_cast<size_t>(ts * out_inner * oc) * dst_es; }
  size_t weight_chunk_bytes() const {  // in oneDNN's layout: channels padded to its blocks
    const auto up = [](int64_t v) { return (v + 63) / 64 * 64; };
    return static_cast<size_t>(up(oc) * up(chans) * taps) * w_es;
  }
};

SlabGeometry slab_geometry(const ConvAttrs& a, const Shape& x, const Shape& w, DType wt, const Shape& out, DType ot) {
  SlabGeometry g;
  g.sp = a.spatial;
  g.chans = x[1];
  g.outs = out[1];
  g.in0 = x[2];
  g.out0 = out[2];
  g.k0 = w[2];
  g.s0 = a.stride[0];
  g.d0 = a.dilation[0];
  g.pb0 = a.pad_before[0];
  g.src_es = g.w_es = wt == DType::F32 ? 4 : 2;
  g.dst_es = ot == DType::F32 ? 4 : 2;
  for (int d = 0; d < g.sp; ++d) g.taps *= w[2 + d];
  for (int d = 1; d < g.sp; ++d) {
    g.padded[d] =
        x[2 + d] +
        (pads_with_data(a, d) ? a.pad_before[static_cast<size_t>(d)] + a.pad_after[static_cast<size_t>(d)] : 0);
    g.in_inner *= g.padded[d];
    g.out_inner *= out[2 + d];
  }
  const size_t per_o = static_cast<size_t>(g.chans * g.taps) * g.w_es;
  const int64_t chunks = std::max<int64_t>(
      1, static_cast<int64_t>((per_o * static_cast<size_t>(g.outs) + weight_chunk_limit - 1) / weight_chunk_limit));
  g.oc = chunks == 1 ? g.outs : std::min(g.outs, ((g.outs + chunks - 1) / chunks + 15) / 16 * 16);
  g.ts = 1;
  while (g.ts < g.out0) {
    ++g.ts;
    if (g.src_bytes() + g.dst_bytes() > slab_limit) {
      --g.ts;
      break;
    }
  }
  const int64_t slabs = (g.out0 + g.ts - 1) / g.ts;
  g.ts = (g.out0 + slabs - 1) / slabs;  // balanced: the tail slab is at most one row shorter
  return g;
}

dnnl::memory::format_tag channels_last_tag(int rank) {
  using tag = dnnl::memory::format_tag;
  return rank == 3 ? tag::acb : rank == 4 ? tag::acdb : tag::acdeb;
}

dnnl::memory::data_type dnnl_type(DType t) {
  return t == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
}

struct SlabPrimitive {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
};

// Where the slab path keeps its working memory in one span (64-byte aligned offsets): input slab, output slab, one
// chunk of converted weights, the primitive's scratchpad (kScratchpadAllowance; measured 12 KiB).
struct SlabScratch {
  size_t dst = 0, weights = 0, scratchpad = 0, total = 0;  // offsets, and the span's bytes
};

SlabScratch slab_scratch(const SlabGeometry& g) {
  const auto up = [](size_t b) { return (b + 63) / 64 * 64; };
  SlabScratch s;
  s.dst = up(g.src_bytes());
  s.weights = s.dst + up(g.dst_bytes());
  s.scratchpad = s.weights + up(g.weight_chunk_bytes());
  s.total = s.scratchpad + kScratchpadAllowance;
  return s;
}

// The primitive for one slab shape: src [1, C, rows, padded...] channels-last in `wt`, weights [oc, C, K...] in
// `weights_md` (format any for the first of a chunk), dst [1, oc, t, out...] channels-last in `ot`.
std::shared_ptr<SlabPrimitive> slab_primitive(const ConvAttrs& a, const SlabGeometry& g, const Shape& w, DType wt,
                                              const Shape& out, DType ot, int64_t rows_out, int64_t oc, bool bias,
                                              const dnnl::memory::desc* weights_md) {
  dims xd{1, g.chans, g.src_rows(rows_out)}, wd{oc, g.chans}, yd{1, oc, rows_out}, stride, dilate, pl, pr;
  for (int d = 1; d < g.sp; ++d) {
    xd.push_back(g.padded[d]);
    yd.push_back(out[2 + d]);
  }
  for (int d = 0; d < g.sp; ++d) {
    const auto i = static_cast<size_t>(d);
    wd.push_back(w[2 + d]);
    stride.push_back(a.stride[i]);
    dilate.push_back(a.dilation[i] - 1);
    const bool keep = d > 0 && !pads_with_data(a, d);  // zero pads of inner dims: oneDNN's
    pl.push_back(keep ? a.pad_before[i] : 0);
    pr.push_back(keep ? a.pad_after[i] : 0);
  }
  const std::string key =
      primitive_key("slab" + std::to_string(static_cast<int>(wt)) + std::to_string(static_cast<int>(ot)) +
                        (bias ? "b" : "n") + (weights_md != nullptr ? "w" : "a"),
                    {&xd, &wd, &yd, &stride, &dilate, &pl, &pr});
  static PrimitiveCache<std::string, SlabPrimitive> cache(kPrimitiveCacheCapacity);
  // A primitive made for given weights is reused only with weights in the same layout.
  const auto usable = [&](const SlabPrimitive& c) {
    return weights_md == nullptr || c.pd.weights_desc() == *weights_md;
  };
  return cache.get(
      key,
      [&] {
        auto c = std::make_shared<SlabPrimitive>();
        const dnnl::memory::desc x_md(xd, dnnl_type(wt), channels_last_tag(static_cast<int>(xd.size())));
        const dnnl::memory::desc y_md(yd, dnnl_type(ot), channels_last_tag(static_cast<int>(yd.size())));
        const dnnl::memory::desc w_md =
            weights_md != nullptr ? *weights_md : dnnl::memory::desc(wd, dnnl_type(wt), dnnl::memory::format_tag::any);
        const dnnl::memory::desc b_md(dims{oc}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        const auto kind = dnnl::prop_kind::forward_inference;
        const auto algo = dnnl::algorithm::convolution_direct;
        const auto desc =
            bias ? dnnl::convolution_forward::desc(kind, algo, x_md, w_md, b_md, y_md, stride, dilate, pl, pr)
                 : dnnl::convolution_forward::desc(kind, algo, x_md, w_md, y_md, stride, dilate, pl, pr);
        c->pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine());
        c->conv = dnnl::convolution_forward(c->pd);
        return c;
      },
      usable);
}

// Input rows [row0, row0 + rows) of dim 0 (padded coordinates) of item b, channels-last, converted to Dst.
template <typename Src, typename Dst>
void pack_rows(const Tensor& x, int64_t b, int64_t row0, int64_t rows, const ConvAttrs& a, const SlabGeometry& g,
               Dst* dst) {
  const int sp = g.sp;
  const int64_t lw = sp > 1 ? g.padded[sp - 1] : 1;  // one line: the last dim
  const int64_t mid = sp > 2 ? g.padded[1] : 1;      // 3-D: the middle dim's padded rows
  const Src* xb = reinterpret_cast<const Src*>(x.raw()) + b * x.strides()[0];
  const int64_t cs = x.strides()[1], s0 = x.strides()[2];
  const int64_t sm = sp > 2 ? x.strides()[3] : 0, sl = sp > 1 ? x.strides()[1 + sp] : 0;
  const auto mode = [&](int d) { return pads_with_data(a, d) ? a.pad_mode[static_cast<size_t>(d)] : PadMode::Zeros; };
  const auto before = [&](int d) { return pads_with_data(a, d) ? a.pad_before[static_cast<size_t>(d)] : 0; };
  std::vector<int64_t> last_src(static_cast<size_t>(lw));
  for (int64_t i = 0; i < lw; ++i)
    last_src[static_cast<size_t>(i)] = sp > 1 ? pad_source_index(i - before(sp - 1), x.dim(1 + sp), mode(sp - 1)) : 0;
  parallel_for(rows * mid, 4, [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t r = line / mid, m = line % mid;
      Dst* out = dst + line * lw * g.chans;
      const int64_t f = pad_source_index(row0 + r - g.pb0, g.in0, a.pad_mode[0]);
      const int64_t h = sp > 2 ? pad_source_index(m - before(1), x.dim(3), mode(1)) : 0;
      if (f < 0 || h < 0) {
        std::memset(static_cast<void*>(out), 0, static_cast<size_t>(lw * g.chans) * sizeof(Dst));
        continue;
      }
      const Src* xl = xb + f * s0 + h * sm;
      for (int64_t c0 = 0; c0 < g.chans; c0 += 16) {
        const int64_t cn = std::min<int64_t>(16, g.chans - c0);
        for (int64_t i = 0; i < lw; ++i) {
          const int64_t s = last_src[static_cast<size_t>(i)];
          Dst* o = out + i * g.chans + c0;
          if (s < 0) {
            for (int64_t c = 0; c < cn; ++c) o[c] = Dst{};
            continue;
          }
          const Src* xs = xl + c0 * cs + s * sl;
          for (int64_t c = 0; c < cn; ++c) {
            if constexpr (std::is_same_v<Src, float> && std::is_same_v<Dst, uint16_t>)
              o[c] = f32_to_bf16(xs[c * cs]);
            else
              o[c] = xs[c * cs];
          }
        }
      }
    }
  });
}

// Rows [r0, r0 + n) of dim 0 of item b of `x` (any strides, NC... order) into the channels-last slab `dst` at
// slab row `at`, in dst_type: one oneDNN reorder (a jit transposition with the dtype conversion). Only for inner
// dims without data padding (the slab then holds exactly x's inner positions).
void reorder_rows_in(const Tensor& x, int64_t b, int64_t r0, int64_t n, std::byte* dst, int64_t at,
                     const SlabGeometry& g, DType dst_type, dnnl::stream& st) {
  dims d{1, g.chans, n}, xs{x.strides()[0], x.strides()[1], x.strides()[2]}, ds{0, 1, g.in_inner * g.chans};
  int64_t inner_stride = g.in_inner * g.chans;
  for (int i = 1; i < g.sp; ++i) {
    d.push_back(x.dim(2 + i));
    xs.push_back(x.strides()[2 + i]);
    inner_stride /= g.padded[i];
    ds.push_back(inner_stride);
  }
  ds[0] = g.src_rows(g.ts) * g.in_inner * g.chans;
  const auto xes = static_cast<int64_t>(dtype_block_bytes(x.dtype()));
  auto& eng = engine();
  dnnl::memory src(dnnl::memory::desc(d, dnnl_type(x.dtype()), xs), eng,
                   x.raw() + (b * x.strides()[0] + r0 * x.strides()[2]) * xes);
  dnnl::memory out(dnnl::memory::desc(d, dnnl_type(dst_type), ds), eng,
                   dst + at * g.in_inner * g.chans * static_cast<int64_t>(g.src_es));
  dnnl::reorder(src, out).execute(st, src, out);
}

// The slab's outputs [rows, out_inner, oc] (channels-last) into out[b, o0 .. o0 + oc, t0 .. t0 + rows, ...]: one
// oneDNN reorder.
void reorder_rows_out(const std::byte* slab, int64_t rows, int64_t oc, const SlabGeometry& g, const Tensor& out,
                      int64_t b, int64_t o0, int64_t t0, dnnl::stream& st) {
  dims d{1, oc, rows}, os{out.strides()[0], out.strides()[1], out.strides()[2]}, ss{0, 1, g.out_inner * oc};
  int64_t inner_stride = g.out_inner * oc;
  for (int i = 1; i < g.sp; ++i) {
    d.push_back(out.dim(2 + i));
    os.push_back(out.strides()[2 + i]);
    inner_stride /= out.dim(2 + i);
    ss.push_back(inner_stride);
  }
  ss[0] = rows * g.out_inner * oc;
  const auto es = static_cast<int64_t>(g.dst_es);
  auto& eng = engine();
  dnnl::memory src(dnnl::memory::desc(d, dnnl_type(out.dtype()), ss), eng, const_cast<std::byte*>(slab));
  dnnl::memory dst(dnnl::memory::desc(d, dnnl_type(out.dtype()), os), eng,
                   out.raw() + (b * out.strides()[0] + o0 * out.strides()[1] + t0 * out.strides()[2]) * es);
  dnnl::reorder(src, dst).execute(st, src, dst);
}

// A conv step's weights per output-channel chunk in the layout of its slab primitives, kept per plan step
// (kernels.h PreparedWeights) when the plan offers a slot.
struct PreparedSlabConv final : PreparedWeights {
  const std::byte* weights_src = nullptr;
  const std::byte* bias_src = nullptr;
  int64_t oc = 0;
  std::vector<dnnl::memory> chunks;  // in their main primitive's weights_desc()
  std::vector<dnnl::memory::desc> descs;
};

std::atomic<size_t> last_workspace{0}, peak_workspace{0};  // of slab calls: the latest, the largest (tests)

void conv_onednn_slabs(const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared) {
  const Tensor& x = in[0];
  const Tensor w = in[1].contiguous();
  const DType wt = w.dtype(), ot = out.dtype();
  const bool has_bias = in.size() == 3;
  const SlabGeometry g = slab_geometry(a, x.shape(), w.shape(), wt, out.shape(), ot);
  const int64_t batch = x.dim(0), nchunks = (g.outs + g.oc - 1) / g.oc;
  std::vector<float> bias;
  if (has_bias) {
    const Tensor b32 = in[2].to(DType::F32).contiguous();
    bias.assign(b32.data<float>(), b32.data<float>() + g.outs);
  }
  auto& eng = engine();
  dnnl::stream st(eng);
  const std::byte* bias_src = has_bias ? in[2].raw() : nullptr;
  auto* ready = prepared != nullptr ? dynamic_cast<PreparedSlabConv*>(prepared->get()) : nullptr;
  if (ready != nullptr && (ready->weights_src != w.raw() || ready->bias_src != bias_src || ready->oc != g.oc))
    ready = nullptr;
  std::shared_ptr<PreparedSlabConv> fresh;
  if (ready == nullptr && prepared != nullptr) {
    fresh = std::make_shared<PreparedSlabConv>();
    fresh->weights_src = w.raw();
    fresh->bias_src = bias_src;
    fresh->oc = g.oc;
  }
  bool inner_data_pads = false;
  for (int d = 1; d < g.sp; ++d) inner_data_pads |= pads_with_data(a, d);
  // The slabs, one chunk of converted weights and the primitive's scratchpad: from the scratch the plan lent this
  // step (conv_scratch_bytes, same layout) when it is there, else allocated here.
  const SlabScratch layout = slab_scratch(g);
  const size_t src_cap = g.src_bytes(), dst_cap = g.dst_bytes();
  const KernelScratch lent = bound_kernel_scratch();
  const bool use_lent = lent.bytes >= layout.total;
  std::unique_ptr<std::byte[]> owned;
  if (!use_lent) owned.reset(new std::byte[layout.weights]);  // src and dst slabs
  std::byte* const base = use_lent ? lent.data : owned.get();
  const auto src_buf = [base] { return base; };
  const auto dst_buf = [base, &layout] { return base + layout.dst; };
  const int64_t row_bytes = g.in_inner * g.chans * static_cast<int64_t>(g.src_es);
  // Our AVX-512 transpositions where the planes are contiguous f32, else oneDNN's reorders.
  bool dense_in = x.strides()[x.rank() - 1] == 1 || x.rank() == 3;
  int64_t inner = 1;
  for (int d = x.rank() - 2; d >= 2 && dense_in; --d) {
    inner *= x.dim(d + 1);
    dense_in = x.strides()[d] == inner;
  }
  const bool fast_in =
      gemm::avx512_available() && x.dtype() == DType::F32 && dense_in && (x.rank() > 3 || x.strides()[2] == 1);
  const bool fast_out = gemm::avx512_available() && ot == DType::F32;
  const auto transpose_f32_v = [](const float* s, int64_t lds, int64_t rows, int64_t cols, std::byte* d, int64_t ldd) {
    transpose_f32(s, lds, rows, cols, reinterpret_cast<float*>(d), ldd);
  };
  const auto transpose_f32_to_bf16_v = [](const float* s, int64_t lds, int64_t rows, int64_t cols, std::byte* d,
                                          int64_t ldd) {
    transpose_f32_to_bf16(s, lds, rows, cols, reinterpret_cast<uint16_t*>(d), ldd);
  };
  // Padded rows [r0, r0 + n) of dim 0 of item b into slab rows [at, at + n).
  const auto pack = [&](int64_t b, int64_t r0, int64_t n, int64_t at) {
    if (n <= 0) return;
    if (inner_data_pads) {  // our own pass: it writes the inner dims' Reflect/Replicate padding too
      std::byte* dst = src_buf() + at * row_bytes;
      if (x.dtype() == DType::F32 && wt == DType::BF16)
        pack_rows<float, uint16_t>(x, b, r0, n, a, g, reinterpret_cast<uint16_t*>(dst));
      else if (x.dtype() == DType::F32)
        pack_rows<float, float>(x, b, r0, n, a, g, reinterpret_cast<float*>(dst));
      else
        pack_rows<uint16_t, uint16_t>(x, b, r0, n, a, g, reinterpret_cast<uint16_t*>(dst));
      return;
    }
    int64_t r = 0;  // runs of rows that read consecutive source rows: one oneDNN reorder per run
    while (r < n) {
      const int64_t f = pad_source_index(r0 + r - g.pb0, g.in0, a.pad_mode[0]);
      int64_t run = 1;
      while (r + run < n && f >= 0 && pad_source_index(r0 + r + run - g.pb0, g.in0, a.pad_mode[0]) == f + run) ++run;
      if (f < 0)
        std::memset(src_buf() + (at + r) * row_bytes, 0, static_cast<size_t>(row_bytes));
      else if (fast_in)  // [C, run·inner] planes -> [run·inner, C] rows
        (wt == DType::BF16 ? transpose_f32_to_bf16_v : transpose_f32_v)(
            x.data<float>() + b * x.strides()[0] + f * x.strides()[2], x.strides()[1], g.chans, run * g.in_inner,
            src_buf() + (at + r) * row_bytes, g.chans);
      else
        reorder_rows_in(x, b, f, run, src_buf(), at + r, g, wt, st);
      r += run;
    }
  };
  size_t weights_transient = 0, scratch_max = 0;
  for (int64_t j = 0; j < nchunks; ++j) {
    const int64_t o0 = j * g.oc, oc = std::min(g.oc, g.outs - o0);
    const int64_t full = std::min(g.ts, g.out0);
    const auto main = slab_primitive(a, g, w.shape(), wt, out.shape(), ot, full, oc, has_bias,
                                     ready != nullptr ? &ready->descs[static_cast<size_t>(j)] : nullptr);
    dnnl::memory weights;
    if (ready != nullptr) {
      weights = ready->chunks[static_cast<size_t>(j)];
    } else {  // this chunk's rows of the weights [O, C, K...], converted to the primitive's layout
      dims wd{oc, g.chans};
      for (int d = 0; d < g.sp; ++d) wd.push_back(w.dim(2 + d));
      dnnl::memory plain(dnnl::memory::desc(wd, dnnl_type(wt), plain_tag(static_cast<int>(wd.size()))), eng,
                         w.raw() + o0 * g.chans * g.taps * static_cast<int64_t>(g.w_es));
      const dnnl::memory::desc wd_prim = main->pd.weights_desc();
      weights = use_lent && !fresh && wd_prim.get_size() <= layout.scratchpad - layout.weights
                    ? dnnl::memory(wd_prim, eng, lent.data + layout.weights)
                    : dnnl::memory(wd_prim, eng);
      dnnl::reorder(plain, weights).execute(st, plain, weights);
      if (fresh) {
        fresh->chunks.push_back(weights);
        fresh->descs.push_back(main->pd.weights_desc());
      } else {
        weights_transient = std::max(weights_transient, main->pd.weights_desc().get_size());
      }
    }
    const dnnl::memory::desc weights_md = main->pd.weights_desc();
    for (int64_t b = 0; b < batch; ++b) {
      int64_t packed_lo = 0, packed_n = 0;  // padded rows of dim 0 the buffer holds
      for (int64_t t0 = 0; t0 < g.out0; t0 += g.ts) {
        const int64_t rows = std::min(g.ts, g.out0 - t0);
        const auto prim =
            rows == full ? main : slab_primitive(a, g, w.shape(), wt, out.shape(), ot, rows, oc, has_bias, &weights_md);
        const int64_t row0 = t0 * g.s0, nrows = g.src_rows(rows);
        // Rows still in the buffer from the previous slab (stride-1 windows overlap by k-1 rows) move to its
        // front; only the rest is packed.
        int64_t kept = 0;
        if (packed_n > 0 && row0 >= packed_lo && row0 < packed_lo + packed_n) {
          kept = std::min(nrows, packed_lo + packed_n - row0);
          std::memmove(src_buf(), src_buf() + (row0 - packed_lo) * row_bytes, static_cast<size_t>(kept * row_bytes));
        }
        pack(b, row0 + kept, nrows - kept, kept);
        packed_lo = row0;
        packed_n = nrows;
        scratch_max = std::max(scratch_max, prim->pd.scratchpad_desc().get_size());
        dnnl::memory xm(prim->pd.src_desc(), eng, src_buf()), ym(prim->pd.dst_desc(), eng, dst_buf());
        const dnnl::memory::desc pad = prim->pd.scratchpad_desc();
        dnnl::memory scratch = use_lent && pad.get_size() <= layout.total - layout.scratchpad
                                   ? dnnl::memory(pad, eng, lent.data + layout.scratchpad)
                                   : dnnl::memory(pad, eng);
        std::unordered_map<int, dnnl::memory> args{
            {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scratch}};
        if (has_bias) args[DNNL_ARG_BIAS] = dnnl::memory(prim->pd.bias_desc(), eng, bias.data() + o0);
        prim->conv.execute(st, args);
        st.wait();
        if (fast_out)  // [rows·inner, oc] -> oc planes of out
          transpose_f32(reinterpret_cast<const float*>(dst_buf()), oc, rows * g.out_inner, oc,
                        out.data<float>() + b * out.strides()[0] + o0 * out.strides()[1] + t0 * out.strides()[2],
                        out.strides()[1]);
        else
          reorder_rows_out(dst_buf(), rows, oc, g, out, b, o0, t0, st);
        st.wait();
      }
    }
  }
  const size_t workspace = src_cap + dst_cap + bias.size() * sizeof(float) + weights_transient + scratch_max;
  if (fresh) *prepared = fresh;
  last_workspace.store(workspace, std::memory_order_relaxed);
  size_t seen = peak_workspace.load(std::memory_order_relaxed);
  while (seen < workspace && !peak_workspace.compare_exchange_weak(seen, workspace)) {
  }
}

// oneDNN deconvolution for a dense ConvTranspose1d (the vocoders' `ups`): torch's weights [C, O, K] are oneDNN's
// (OC, IC, KW) in the "iow" order; padding p each side, output_padding taken off the right.
struct OnednnDeconv {
  dnnl::deconvolution_forward::primitive_desc pd;
  dnnl::deconvolution_forward deconv;
  dnnl::memory::desc x_user, w_user, y_user, b_user;
};

struct PreparedOnednnDeconv final : PreparedWeights {
  std::shared_ptr<OnednnDeconv> primitive;
  const std::byte* weights_src = nullptr;
  const std::byte* bias_src = nullptr;
  Tensor plain;
  dnnl::memory weights;
  Tensor bias;  // f32
};

std::shared_ptr<OnednnDeconv> deconv_primitive(const ConvAttrs& a, const Tensor& x, const Tensor& w, bool bias,
                                               const Tensor& out) {
  const auto dt = w.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const auto xt = x.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const auto yt = out.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
  const dims xd{x.dim(0), x.dim(1), x.dim(2)}, wd{w.dim(1), w.dim(0), w.dim(2)}, yd{out.dim(0), out.dim(1), out.dim(2)};
  const dims stride{a.stride[0]}, dilate{a.dilation[0] - 1}, pl{a.pad_before[0]},
      pr{a.pad_before[0] - a.output_padding};
  const std::string key = primitive_key(std::to_string(static_cast<int>(dt)) + std::to_string(static_cast<int>(xt)) +
                                            std::to_string(static_cast<int>(yt)) + (bias ? "b" : "n"),
                                        {&xd, &wd, &yd, &stride, &dilate, &pl, &pr});
  static PrimitiveCache<std::string, OnednnDeconv> cache(kPrimitiveCacheCapacity);
  return cache.get(key, [&] {
    auto c = std::make_shared<OnednnDeconv>();
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::desc x_any(xd, dt, tag::any), w_any(wd, dt, tag::any), y_any(yd, yt, tag::any);
    c->x_user = dnnl::memory::desc(xd, xt, tag::abc);
    c->w_user = dnnl::memory::desc(wd, dt, tag::bac);  // (OC, IC, KW) stored IC-major
    c->y_user = dnnl::memory::desc(yd, yt, tag::abc);
    c->b_user = dnnl::memory::desc(dims{out.dim(1)}, dnnl::memory::data_type::f32, tag::a);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto algo = dnnl::algorithm::deconvolution_direct;
    const auto desc =
        bias ? dnnl::deconvolution_forward::desc(kind, algo, x_any, w_any, c->b_user, y_any, stride, dilate, pl, pr)
             : dnnl::deconvolution_forward::desc(kind, algo, x_any, w_any, y_any, stride, dilate, pl, pr);
    c->pd = dnnl::deconvolution_forward::primitive_desc(desc, attr, engine());
    c->deconv = dnnl::deconvolution_forward(c->pd);
    return c;
  });
}

void deconv_onednn(const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared) {
  const Tensor x = in[0].contiguous();
  const bool has_bias = in.size() == 3;
  const auto c = deconv_primitive(a, x, in[1], has_bias, out);
  auto& eng = engine();
  dnnl::stream st(eng);
  auto as_prim = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& want, void* data) {
    dnnl::memory u(user, eng, data);
    if (user == want) return u;
    dnnl::memory m(want, eng);
    dnnl::reorder(u, m).execute(st, u, m);
    return m;
  };
  const std::byte* bias_src = has_bias ? in[2].raw() : nullptr;
  std::shared_ptr<PreparedOnednnDeconv> fresh;
  const auto* ready = prepared != nullptr ? dynamic_cast<const PreparedOnednnDeconv*>(prepared->get()) : nullptr;
  if (ready == nullptr || ready->primitive != c || ready->weights_src != in[1].raw() || ready->bias_src != bias_src) {
    fresh = std::make_shared<PreparedOnednnDeconv>();
    fresh->primitive = c;
    fresh->weights_src = in[1].raw();
    fresh->bias_src = bias_src;
    fresh->plain = in[1].contiguous();
    fresh->weights = as_prim(c->w_user, c->pd.weights_desc(), fresh->plain.raw());
    if (fresh->weights.get_data_handle() != fresh->plain.raw()) fresh->plain = Tensor();
    fresh->bias = has_bias ? in[2].to(DType::F32).contiguous() : Tensor();
    ready = fresh.get();
    if (prepared != nullptr) *prepared = fresh;
  }
  dnnl::memory xm = as_prim(c->x_user, c->pd.src_desc(), x.raw());
  dnnl::memory yu(c->y_user, eng, out.raw());
  dnnl::memory ym = c->pd.dst_desc() == c->y_user ? yu : dnnl::memory(c->pd.dst_desc(), eng);
  dnnl::memory scratch(c->pd.scratchpad_desc(), eng);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, ready->weights}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scratch}};
  if (has_bias) args[DNNL_ARG_BIAS] = dnnl::memory(c->b_user, eng, ready->bias.raw());
  c->deconv.execute(st, args);
  if (ym != yu) dnnl::reorder(ym, yu).execute(st, ym, yu);
  st.wait();
}

}  // namespace

bool conv_with_path(ConvPath path, OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out,
                    PreparedSlot* prepared) {
  if ((kind != OpKind::Conv && kind != OpKind::ConvTranspose1d) || in.size() < 2 || in.size() > 3) return false;
  for (const Tensor& t : in)
    if (!dtype_is_float(t.dtype())) return false;
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::conv(kind, a, metas);
  if (out.dtype() != expect.dtype || out.shape() != expect.shape || !out.is_contiguous()) return false;
  if (out.numel() == 0) return true;
  if (path == ConvPath::Auto && is_depthwise_1d(kind, a, in)) {  // before the dtype rule: weights may be f32
    conv_depthwise_1d(kind, a, in, out);
    return true;
  }
  const DType dt = in[0].dtype(), wt = in[1].dtype();
  if ((dt != DType::F32 && dt != DType::BF16) || (wt != DType::F32 && wt != DType::BF16)) return false;
  if (dt == DType::BF16 && wt == DType::F32) return false;  // would compute in f32 from bf16 activations: not ours
  if (path == ConvPath::Auto && kind == OpKind::Conv && small_conv_applies(a, in, out)) {  // no JIT to build
    run_small_conv(a, in, out, prepared);                                                  // conv_small_avx512.cpp
    return true;
  }
  if (kind == OpKind::ConvTranspose1d) {
    if (path == ConvPath::Im2col || a.groups != 1) return false;
    try {
      deconv_onednn(a, in, out, prepared);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }
  if (path != ConvPath::Im2col) {  // the measured rule (top of this file)
    if (a.groups == 1 && path != ConvPath::OneDnnWhole) {
      try {
        conv_onednn_slabs(a, in, out, prepared);
        return true;
      } catch (const dnnl::error&) {  // no channels-last primitive: the whole-tensor one below
      }
    }
    try {
      conv_onednn(a, in, out, prepared);
      return true;
    } catch (const dnnl::error&) {
      if (path == ConvPath::OneDnn || path == ConvPath::OneDnnWhole) return false;  // no primitive for this call
    }
  }
  if (!gemm::avx512_available() || wt != dt) return false;  // im2col runs in one dtype
  conv_im2col(a, in, out);
  return true;
}

size_t conv_workspace_bytes(const ConvAttrs& a, const TensorMeta& x, const TensorMeta& w, const TensorMeta& out) {
  const auto f32_bytes = [](const Shape& s) { return static_cast<size_t>(s.numel()) * sizeof(float); };
  // Calls whose weights fit conv_small_avx512.cpp's rule copy the padded input and pack the weights in f32.
  const size_t small =
      small_conv_weights_fit(w.shape) ? small_conv_workspace_bytes(a, x.shape, w.shape, out.shape) : size_t{0};
  if (a.groups != 1 || x.shape.rank() < 3)  // the whole-tensor path: padded copy, reordered input and output
    return std::max(small, 3 * f32_bytes(x.shape) + f32_bytes(out.shape) + f32_bytes(w.shape) + kScratchpadAllowance);
  const SlabGeometry g = slab_geometry(a, x.shape, w.shape, w.dtype, out.shape, out.dtype);
  return std::max(small, slab_scratch(g).total + static_cast<size_t>(g.outs) * sizeof(float));
}

size_t conv_scratch_bytes(OpKind kind, const ConvAttrs& a, std::span<const TensorMeta> in, const TensorMeta& out) {
  if (kind != OpKind::Conv || in.size() < 2 || in.size() > 3 || !gemm::avx512_available()) return 0;
  const TensorMeta &x = in[0], &w = in[1];
  const auto f32_or_bf16 = [](DType t) { return t == DType::F32 || t == DType::BF16; };
  if (!f32_or_bf16(x.dtype) || !f32_or_bf16(w.dtype) || !f32_or_bf16(out.dtype)) return 0;
  if (x.dtype == DType::BF16 && w.dtype == DType::F32) return 0;
  if (a.spatial == 1 && (a.groups != 1 || w.dtype == DType::BF16)) return 0;  // depthwise / conv1d_avx512.cpp
  if (small_conv_weights_fit(w.shape)) return small_conv_scratch_bytes(a, x.shape);
  if (a.groups != 1 || x.shape.rank() < 3) return 0;  // the whole-tensor path allocates its own
  return slab_scratch(slab_geometry(a, x.shape, w.shape, w.dtype, out.shape, out.dtype)).total;
}

void set_conv_slab_limits(size_t slab_bytes, size_t weight_chunk_bytes) {
  slab_limit = slab_bytes;
  weight_chunk_limit = weight_chunk_bytes;
}

size_t last_conv_workspace_bytes() { return last_workspace.load(std::memory_order_relaxed); }

size_t conv_workspace_peak_bytes() { return peak_workspace.load(std::memory_order_relaxed); }

void reset_conv_workspace_peak() { peak_workspace = 0; }

bool try_conv(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared) {
  return conv_with_path(ConvPath::Auto, kind, a, in, out, prepared);
}

}  // namespace ltx::cpu::opt
