// opt::try_conv: Conv (1-3 spatial dims, strides, dilation, groups, every pad mode) on the faster of
//   (a) oneDNN's convolution in its preferred blocked layouts ("any": brgconv on AVX-512), with src, weights and
//       dst reordered on every call (no weight cache: a cache keyed by pointer could go stale silently), the
//       primitive cached per shape; Reflect/Replicate padding is materialized into a scratch copy first, zero
//       padding is left to oneDNN;
//   (b) im2col over our own GEMM (matmul_gemm.h): columns [C/G·taps, chunk of output positions] built from the
//       input with every pad mode read in place, multiplied by the weights [O/G, C/G·taps] as they lie.
// Rule, from measurements on this machine (Zen 4, 2 threads, medians of 4 interleaved runs, GFLOP/s; 3x3x3 causal
// conv, replicate in time, zeros in space, bias; "peer" is oneDNN alone with inputs pre-reordered, no padding copy):
//   shape (C->O @ T×H×W)     bf16: (a)  (b)  peer    f32: (a)  (b)  peer
//   1024->1024 @ 4×16×24           99   57   196          60   38    91
//    512->512  @ 6×32×48          131   39   182         104   56   155
//    256->256  @ 4×48×64          135   26   208         130   37   187
//    128->128  @ 4×64×96           99   14   237         111   22   192
//    128->1024 @ 4×16×24           75   60   172          77   58   145
//    128->48   @ 4×64×96           43    5   153          44    6   113
// (a) wins on every VAE shape (im2col's column build and weight streaming cost more than the per-call reorders),
// so the rule is: oneDNN, and im2col only where oneDNN offers no primitive for the call.
// ConvTranspose1d is left to the reference (the vocoder's upsampling is a small share of the run).
#include "backend/cpu/conv_opt.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/cpu/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/padding.h"
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
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> src_last(static_cast<size_t>(last));
    const int ld = sp - 1;
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

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

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
  const auto dt = x.dtype() == DType::F32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16;
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
  std::string key = std::to_string(static_cast<int>(dt)) + (bias ? "b" : "n");
  for (const auto* v : {&xd, &wd, &yd, &stride, &dilate, &pl, &pr}) {
    key += '|';
    for (int64_t e : *v) key += std::to_string(e) + ',';
  }
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<OnednnConv>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[key];
  if (slot) return slot;
  auto c = std::make_shared<OnednnConv>();
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc x_any(xd, dt, tag::any), w_any(wd, dt, tag::any), y_any(yd, dt, tag::any);
  c->x_user = dnnl::memory::desc(xd, dt, plain_tag(static_cast<int>(xd.size())));
  c->w_user = dnnl::memory::desc(wd, dt, plain_tag(static_cast<int>(wd.size())));
  c->y_user = dnnl::memory::desc(yd, dt, plain_tag(static_cast<int>(yd.size())));
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
  slot = c;
  return slot;
}

void conv_onednn(const ConvAttrs& a, Inputs in, const Tensor& out) {
  Tensor x = in[0];
  int64_t pad_l[3] = {}, pad_r[3] = {};
  bool materialize = false;
  for (int d = 0; d < a.spatial; ++d) {
    materialize |= pads_with_data(a, d);
    pad_l[d] = pads_with_data(a, d) ? 0 : a.pad_before[static_cast<size_t>(d)];
    pad_r[d] = pads_with_data(a, d) ? 0 : a.pad_after[static_cast<size_t>(d)];
  }
  x = materialize ? materialize_padding(x, a) : x.contiguous();
  const Tensor w = in[1].contiguous();
  const bool has_bias = in.size() == 3;
  const Tensor bias = has_bias ? in[2].to(DType::F32) : Tensor();
  const auto c = onednn_primitive(a, x, w, has_bias, out, pad_l, pad_r);

  auto& eng = engine();
  dnnl::stream st(eng);
  auto as_prim = [&](const dnnl::memory::desc& user, const dnnl::memory::desc& want, void* data) {
    dnnl::memory u(user, eng, data);
    if (user == want) return u;
    dnnl::memory m(want, eng);
    dnnl::reorder(u, m).execute(st, u, m);
    return m;
  };
  dnnl::memory xm = as_prim(c->x_user, c->pd.src_desc(), x.raw());
  dnnl::memory wm = as_prim(c->w_user, c->pd.weights_desc(), w.raw());
  dnnl::memory yu(c->y_user, eng, out.raw());
  dnnl::memory ym = c->pd.dst_desc() == c->y_user ? yu : dnnl::memory(c->pd.dst_desc(), eng);
  dnnl::memory scratch(c->pd.scratchpad_desc(), eng);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scratch}};
  if (has_bias) args[DNNL_ARG_BIAS] = dnnl::memory(c->b_user, eng, bias.raw());
  c->conv.execute(st, args);
  if (ym != yu) dnnl::reorder(ym, yu).execute(st, ym, yu);
  st.wait();
}

// ---------------------------------------------------------------------------------------------------------------
// (b) im2col over our GEMM

void conv_im2col(const ConvAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];              // [B, C, *S]
  const Tensor w = in[1].contiguous();  // [O, C/G, *K] = [O, C/G·taps] row-major
  const int sp = a.spatial;
  const int64_t batch = x.dim(0), groups = a.groups;
  const int64_t cg = w.dim(1), og = w.dim(0) / groups;
  int64_t taps = 1, positions = 1;
  int64_t kdim[3] = {1, 1, 1}, odim[3] = {1, 1, 1}, xdim[3] = {1, 1, 1};
  for (int d = 0; d < sp; ++d) {
    kdim[3 - sp + d] = w.dim(2 + d);
    odim[3 - sp + d] = out.dim(2 + d);
    xdim[3 - sp + d] = x.dim(2 + d);
    taps *= w.dim(2 + d);
    positions *= out.dim(2 + d);
  }
  auto attr3 = [&](const std::array<int64_t, 3>& v, int64_t fill) {  // right-aligned to 3 dims
    std::array<int64_t, 3> r{fill, fill, fill};
    for (int d = 0; d < sp; ++d) r[static_cast<size_t>(3 - sp + d)] = v[static_cast<size_t>(d)];
    return r;
  };
  const auto stride = attr3(a.stride, 1), dil = attr3(a.dilation, 1), pb = attr3(a.pad_before, 0);
  std::array<PadMode, 3> mode{PadMode::Zeros, PadMode::Zeros, PadMode::Zeros};
  for (int d = 0; d < sp; ++d) mode[static_cast<size_t>(3 - sp + d)] = a.pad_mode[static_cast<size_t>(d)];
  int64_t xs[3] = {0, 0, 0};
  for (int d = 0; d < sp; ++d) xs[3 - sp + d] = x.strides()[2 + d];

  const int64_t k_total = cg * taps;
  // Columns of at most ~4M elements, at least 96 positions wide (the GEMM's panels want width).
  const int64_t chunk = std::min(positions, std::max<int64_t>(96, (int64_t{4} << 20) / k_total / 16 * 16));
  const DType dt = x.dtype();
  const auto es = static_cast<int64_t>(dtype_block_bytes(dt));
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  std::vector<std::byte> col(static_cast<size_t>(k_total * chunk * es));
  std::vector<float> acc(static_cast<size_t>(og * chunk));
  std::vector<float> bias(static_cast<size_t>(out.dim(1)), 0.0f);
  if (in.size() == 3)
    for (int64_t o = 0; o < out.dim(1); ++o)
      bias[static_cast<size_t>(o)] = load_as_f32(
          in[2].raw() + o * in[2].strides()[0] * static_cast<int64_t>(dtype_block_bytes(in[2].dtype())), in[2].dtype());

  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
        const int64_t pc = std::min(chunk, positions - p0);
        // col[(c·taps + tap), p] = x_padded[b, g·cg + c, pos(p)·stride + k(tap)·dilation]
        parallel_for(k_total, 8, [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t c = row / taps, tap = row % taps;
            const int64_t k[3] = {tap / (kdim[1] * kdim[2]), (tap / kdim[2]) % kdim[1], tap % kdim[2]};
            const std::byte* xc = x.raw() + (b * x.strides()[0] + (g * cg + c) * x.strides()[1]) * es;
            std::byte* dst = col.data() + row * chunk * es;
            for (int64_t p = 0; p < pc; ++p) {
              const int64_t pos = p0 + p;
              const int64_t o[3] = {pos / (odim[1] * odim[2]), (pos / odim[2]) % odim[1], pos % odim[2]};
              int64_t off = 0;
              for (int d = 0; d < 3 && off >= 0; ++d) {
                const auto i = static_cast<size_t>(d);
                const int64_t s = pad_source_index(o[d] * stride[i] + k[d] * dil[i] - pb[i], xdim[d], mode[i]);
                off = s < 0 ? -1 : off + s * xs[d];
              }
              if (off < 0)
                std::memset(dst + p * es, 0, static_cast<size_t>(es));
              else
                std::memcpy(dst + p * es, xc + off * es, static_cast<size_t>(es));
            }
          }
        });
        gemm::Problem prob;
        prob.m = og, prob.n = pc, prob.k = k_total;
        prob.a = {w.raw() + g * og * k_total * es, dt, k_total, 1};
        prob.b.data = col.data(), prob.b.dtype = dt, prob.b.sk = chunk, prob.b.sn = 1;
        prob.out = reinterpret_cast<std::byte*>(acc.data()), prob.out_dtype = DType::F32, prob.ldo = pc;
        prob.compute = dt == DType::BF16 ? gemm::Compute::BF16 : gemm::Compute::F32;
        gemm::run_avx512(prob);
        for (int64_t o = 0; o < og; ++o) {  // bias and the one rounding to out's dtype
          const int64_t oc = g * og + o;
          std::byte* dst = out.raw() + ((b * out.dim(1) + oc) * positions + p0) * oes;
          for (int64_t p = 0; p < pc; ++p)
            store_from_f32(dst + p * oes, out.dtype(),
                           acc[static_cast<size_t>(o * pc + p)] + bias[static_cast<size_t>(oc)]);
        }
      }
}

}  // namespace

bool conv_with_path(ConvPath path, OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out) {
  if (kind != OpKind::Conv || in.size() < 2 || in.size() > 3) return false;
  const DType dt = in[0].dtype();
  if ((dt != DType::F32 && dt != DType::BF16) || in[1].dtype() != dt) return false;
  if (in.size() == 3 && !dtype_is_float(in[2].dtype())) return false;
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::conv(kind, a, metas);
  if (out.dtype() != expect.dtype || out.shape() != expect.shape || !out.is_contiguous()) return false;
  if (out.numel() == 0) return true;
  if (path != ConvPath::Im2col) {  // the measured rule (top of this file)
    try {
      conv_onednn(a, in, out);
      return true;
    } catch (const dnnl::error&) {
      if (path == ConvPath::OneDnn) return false;  // no primitive for this call
    }
  }
  if (!gemm::avx512_available()) return false;
  conv_im2col(a, in, out);
  return true;
}

bool try_conv(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out) {
  return conv_with_path(ConvPath::Auto, kind, a, in, out);
}

}  // namespace ltx::cpu::opt
