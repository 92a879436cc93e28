// Reference convolutions, as torch's F.conv1d/2d/3d (cross-correlation) after F.pad in the given mode, and
// F.conv_transpose1d:
//   conv:           out[b,o,p] = bias[o] + Σ_{c∈group(o), k} w[o,c,k] · x_padded[b, g·C/G + c, p·stride + k·dilation]
//   conv_transpose: out[b,o,t] = bias[o] + Σ_{c∈group(o), k, l: l·stride + k·dilation = t + padding} x[b,c,l]·w[c,o',k]
// Each output element is computed on its own (gather form), so threads never write the same element.
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/padding.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

namespace ltx::cpu::ref {
namespace {

float load(const Tensor& t, std::initializer_list<int64_t> index) {
  return load_as_f32(t.raw() + element_byte_offset(t, index.begin()), t.dtype());
}

void unravel(int64_t flat, const Shape& shape, int64_t* index) {
  for (int i = shape.rank() - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
}

void conv_nd(const ConvAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];  // [B, C, *S]
  const Tensor& w = in[1];  // [O, C/G, *K]
  const int sp = a.spatial;
  const int64_t c_per_group = w.dim(1);
  const int64_t o_per_group = w.dim(0) / a.groups;
  Shape kernel;  // [*K]
  for (int d = 0; d < sp; ++d) kernel.push_back(w.dim(2 + d));
  const int64_t n_taps = kernel.numel();
  const auto xes = static_cast<int64_t>(dtype_block_bytes(x.dtype()));
  const auto wes = static_cast<int64_t>(dtype_block_bytes(w.dtype()));
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));

  parallel_for(out.numel(), 16, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> x_tap(static_cast<size_t>(n_taps));  // x's spatial element offset per tap, -1: zero
    std::vector<int64_t> w_tap(static_cast<size_t>(n_taps));  // w's spatial element offset per tap
    int64_t index[kMaxRank] = {};                             // [b, o, *p]
    int64_t k[3] = {};
    for (int64_t e = begin; e < end; ++e) {
      unravel(e, out.shape(), index);
      const int64_t b = index[0], o = index[1];
      for (int64_t t = 0; t < n_taps; ++t) {
        unravel(t, kernel, k);
        int64_t x_off = 0, w_off = 0;
        for (int d = 0; d < sp; ++d) {
          const auto i = static_cast<size_t>(d);
          const int64_t padded = index[2 + d] * a.stride[i] + k[d] * a.dilation[i] - a.pad_before[i];
          const int64_t src = pad_source_index(padded, x.dim(2 + d), a.pad_mode[i]);
          if (src < 0) {
            x_off = -1;
            break;
          }
          x_off += src * x.strides()[2 + d];
          w_off += k[d] * w.strides()[2 + d];
        }
        x_tap[static_cast<size_t>(t)] = x_off;
        w_tap[static_cast<size_t>(t)] = w_off;
      }
      const int64_t group = o / o_per_group;
      float acc = in.size() == 3 ? load(in[2], {o}) : 0.0f;
      for (int64_t c = 0; c < c_per_group; ++c) {
        const std::byte* xc = x.raw() + (b * x.strides()[0] + (group * c_per_group + c) * x.strides()[1]) * xes;
        const std::byte* wc = w.raw() + (o * w.strides()[0] + c * w.strides()[1]) * wes;
        for (size_t t = 0; t < x_tap.size(); ++t)
          if (x_tap[t] >= 0)
            acc += load_as_f32(xc + x_tap[t] * xes, x.dtype()) * load_as_f32(wc + w_tap[t] * wes, w.dtype());
      }
      store_from_f32(out.raw() + e * oes, out.dtype(), acc);
    }
  });
}

void conv_transpose1d(const ConvAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];  // [B, C, L]
  const Tensor& w = in[1];  // [C, O/G, K]
  const int64_t len = x.dim(2), taps = w.dim(2);
  const int64_t c_per_group = x.dim(1) / a.groups;
  const int64_t o_per_group = w.dim(1);
  const int64_t stride = a.stride[0], dilation = a.dilation[0], padding = a.pad_before[0];
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));

  parallel_for(out.numel(), 16, [&](int64_t begin, int64_t end) {
    int64_t index[3] = {};  // [b, o, t]
    for (int64_t e = begin; e < end; ++e) {
      unravel(e, out.shape(), index);
      const int64_t b = index[0], o = index[1], t = index[2];
      const int64_t group = o / o_per_group;
      float acc = in.size() == 3 ? load(in[2], {o}) : 0.0f;
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t num = t + padding - k * dilation;  // = l·stride for the input position l feeding t
        if (num < 0 || num % stride != 0 || num / stride >= len) continue;
        const int64_t l = num / stride;
        for (int64_t c = group * c_per_group; c < (group + 1) * c_per_group; ++c)
          acc += load(x, {b, c, l}) * load(w, {c, o - group * o_per_group, k});
      }
      store_from_f32(out.raw() + e * oes, out.dtype(), acc);
    }
  });
}

}  // namespace

void conv(OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::conv(kind, a, metas);
  LTX_CHECK(out.dtype() == expect.dtype && out.shape() == expect.shape && out.is_contiguous(), "cpu", op_name(kind),
            ": output ", out.describe(), " must be a contiguous ", dtype_name(expect.dtype), expect.shape.str());
  if (kind == OpKind::ConvTranspose1d)
    conv_transpose1d(a, in, out);
  else
    conv_nd(a, in, out);
}

}  // namespace ltx::cpu::ref
