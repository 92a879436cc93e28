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

#include "backend/cpu/conv_small.h"
#include "backend/cpu/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/padding.h"
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
  std::string key = std::to_string(static_cast<int>(dt)) + std::to_string(static_cast<int>(xt)) +
                    std::to_string(static_cast<int>(yt)) + (bias ? "b" : "n");
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
  slot = c;
  return slot;
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
  std::string key = std::to_string(static_cast<int>(dt)) + std::to_string(static_cast<int>(xt)) +
                    std::to_string(static_cast<int>(yt)) + (bias ? "b" : "n");
  for (const auto* v : {&xd, &wd, &yd, &stride, &dilate, &pl, &pr}) {
    key += '|';
    for (int64_t e : *v) key += std::to_string(e) + ',';
  }
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<OnednnDeconv>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[key];
  if (slot) return slot;
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
  slot = c;
  return slot;
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

// ---------------------------------------------------------------------------------------------------------------
// Depthwise 1-D (groups = channels, one filter per channel: the vocoder's anti-aliased ×2 resampling): per row,
// the input converted to f32 once (with its padding), the filter in f32, each output a K-tap dot product; any
// input/weight/output float dtypes. Memory-bound, so no GEMM.

void row_to_f32(const Tensor& t, int64_t b, int64_t c, float* dst) {
  const int64_t n = t.dim(2), st = t.strides()[2];
  const auto es = static_cast<int64_t>(dtype_block_bytes(t.dtype()));
  const std::byte* src = t.raw() + (b * t.strides()[0] + c * t.strides()[1]) * es;
  if (t.dtype() == DType::BF16 && st == 1) {
    const auto* h = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
  } else if (t.dtype() == DType::F32 && st == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = load_as_f32(src + i * st * es, t.dtype());
  }
}

void store_row(const float* v, int64_t n, const Tensor& out, int64_t row) {
  if (out.dtype() == DType::F32) {
    std::memcpy(out.data<float>() + row * n, v, static_cast<size_t>(n) * sizeof(float));
  } else if (out.dtype() == DType::BF16) {
    auto* h = reinterpret_cast<uint16_t*>(out.raw()) + row * n;
    for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(v[i]);
  } else {
    const auto es = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
    for (int64_t i = 0; i < n; ++i) store_from_f32(out.raw() + (row * n + i) * es, out.dtype(), v[i]);
  }
}

bool is_depthwise_1d(OpKind kind, const ConvAttrs& a, Inputs in) {
  if (a.spatial != 1 || in[0].rank() != 3) return false;
  const int64_t c = in[0].dim(1);
  return a.groups == c && in[1].dim(0) == c && in[1].dim(1) == 1;
}

void conv_depthwise_1d(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  const int64_t batch = x.dim(0), chans = x.dim(1), len = x.dim(2), taps = in[1].dim(2), olen = out.dim(2);
  const int64_t stride = a.stride[0], dil = a.dilation[0], pb = a.pad_before[0];
  const bool transposed = kind == OpKind::ConvTranspose1d;
  const int64_t padded = transposed ? len : len + pb + a.pad_after[0];
  parallel_for(batch * chans, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(padded)), src(static_cast<size_t>(len)), y(static_cast<size_t>(olen));
    std::vector<float> w(static_cast<size_t>(taps));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / chans, c = r % chans;
      for (int64_t k = 0; k < taps; ++k)
        w[static_cast<size_t>(k)] =
            load_as_f32(in[1].raw() + (c * in[1].strides()[0] + k * in[1].strides()[2]) *
                                          static_cast<int64_t>(dtype_block_bytes(in[1].dtype())),
                        in[1].dtype());
      const float bias = in.size() == 3
                             ? load_as_f32(in[2].raw() + c * in[2].strides()[0] *
                                                             static_cast<int64_t>(dtype_block_bytes(in[2].dtype())),
                                           in[2].dtype())
                             : 0.0f;
      row_to_f32(x, b, c, src.data());
      if (transposed) {  // y[l·stride + k·dil - pad] += x[l]·w[k]
        std::fill(y.begin(), y.end(), bias);
        for (int64_t l = 0; l < len; ++l) {
          const float v = src[static_cast<size_t>(l)];
          for (int64_t k = 0; k < taps; ++k) {
            const int64_t t = l * stride + k * dil - pb;
            if (t >= 0 && t < olen) y[static_cast<size_t>(t)] += v * w[static_cast<size_t>(k)];
          }
        }
      } else {  // y[t] = Σ_k xpad[t·stride + k·dil]·w[k]
        for (int64_t i = 0; i < padded; ++i) {
          const int64_t sidx = pad_source_index(i - pb, len, a.pad_mode[0]);
          row[static_cast<size_t>(i)] = sidx < 0 ? 0.0f : src[static_cast<size_t>(sidx)];
        }
        for (int64_t t = 0; t < olen; ++t) {
          const float* xp = row.data() + t * stride;
          float acc = bias;
          for (int64_t k = 0; k < taps; ++k) acc += xp[k * dil] * w[static_cast<size_t>(k)];
          y[static_cast<size_t>(t)] = acc;
        }
      }
      store_row(y.data(), olen, out, r);
    }
  });
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
    run_small_conv(a, in, out, prepared);                                                   // conv_small_avx512.cpp
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
    try {
      conv_onednn(a, in, out, prepared);
      return true;
    } catch (const dnnl::error&) {
      if (path == ConvPath::OneDnn) return false;  // no primitive for this call
    }
  }
  if (!gemm::avx512_available() || wt != dt) return false;  // im2col runs in one dtype
  conv_im2col(a, in, out);
  return true;
}

bool try_conv(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared) {
  return conv_with_path(ConvPath::Auto, kind, a, in, out, prepared);
}

}  // namespace ltx::cpu::opt
