// Conv and ConvTranspose1d shape inference, with torch's output-size formulas (torch.nn.Conv1d/2d/3d and
// torch.nn.ConvTranspose1d docs): out = (S + pad_before + pad_after - dilation·(K-1) - 1) / stride + 1, and
// out = (L-1)·stride - 2·padding + dilation·(K-1) + output_padding + 1.
#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {
namespace {

void check_common(const char* name, const ConvAttrs& a, int spatial, Inputs in) {
  LTX_CHECK(in.size() == 2 || in.size() == 3, "op", name, ": expects x, weight and an optional bias, got ", in.size(),
            " inputs");
  for (size_t i = 0; i < in.size(); ++i)
    LTX_CHECK(dtype_is_float(in[i].dtype), "op", name, ": input ", i, " must be f32, bf16 or f16, got ",
              dtype_name(in[i].dtype));
  LTX_CHECK(in[0].shape.rank() == 2 + spatial && in[1].shape.rank() == 2 + spatial, "op", name, ": x ",
            in[0].shape.str(), " and weight ", in[1].shape.str(), " must both have rank ", 2 + spatial);
  LTX_CHECK(a.groups >= 1, "op", name, ": groups must be >= 1, got ", a.groups);
  for (int d = 0; d < spatial; ++d) {
    const auto i = static_cast<size_t>(d);
    LTX_CHECK(a.stride[i] >= 1 && a.dilation[i] >= 1, "op", name, ": stride and dilation must be >= 1 (dim ", d, ")");
    LTX_CHECK(a.pad_before[i] >= 0 && a.pad_after[i] >= 0, "op", name, ": padding must be >= 0 (dim ", d, ")");
    LTX_CHECK(in[0].shape[2 + d] >= 1 && in[1].shape[2 + d] >= 1, "op", name, ": empty spatial dimension in x ",
              in[0].shape.str(), " or weight ", in[1].shape.str());
  }
}

void check_bias(const char* name, Inputs in, int64_t out_channels) {
  if (in.size() == 3)
    LTX_CHECK(in[2].shape == Shape{out_channels}, "op", name, ": bias ", in[2].shape.str(), " must be [", out_channels,
              "]");
}

TensorMeta conv_nd(const ConvAttrs& a, Inputs in) {
  LTX_CHECK(a.spatial >= 1 && a.spatial <= 3, "op", "conv: 1 to 3 spatial dims, got ", a.spatial);
  check_common("conv", a, a.spatial, in);
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  const int64_t c = x[1], o = w[0];
  LTX_CHECK(c % a.groups == 0 && o % a.groups == 0 && w[1] == c / a.groups, "op", "conv: x ", x.str(), " and weight ",
            w.str(), " do not fit ", a.groups, " groups (weight must be [O, C/groups, *K])");
  check_bias("conv", in, o);
  Shape out{x[0], o};
  for (int d = 0; d < a.spatial; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t s = x[2 + d];
    const PadMode mode = a.pad_mode[i];
    LTX_CHECK(mode == PadMode::Zeros || mode == PadMode::Reflect || mode == PadMode::Replicate, "op",
              "conv: pad mode of dim ", d, " must be zeros, reflect or replicate");
    // Reflection mirrors without repeating the edge, so each side can add at most S-1 elements (as torch).
    LTX_CHECK(mode != PadMode::Reflect || (a.pad_before[i] < s && a.pad_after[i] < s), "op", "conv: reflect padding ",
              a.pad_before[i], "/", a.pad_after[i], " must be smaller than the input size ", s, " (dim ", d, ")");
    const int64_t span = a.dilation[i] * (w[2 + d] - 1) + 1;
    const int64_t padded = s + a.pad_before[i] + a.pad_after[i];
    LTX_CHECK(padded >= span, "op", "conv: kernel ", w.str(), " (dilation ", a.dilation[i],
              ") is larger than the padded input ", padded, " of x ", x.str(), " (dim ", d, ")");
    out.push_back((padded - span) / a.stride[i] + 1);
  }
  return {in[0].dtype, out};
}

TensorMeta conv_transpose1d(const ConvAttrs& a, Inputs in) {
  check_common("conv_transpose1d", a, 1, in);
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  LTX_CHECK(w[0] == x[1] && x[1] % a.groups == 0, "op", "conv_transpose1d: x ", x.str(), " and weight ", w.str(),
            " do not fit ", a.groups, " groups (weight must be [C, O/groups, K])");
  const int64_t o = w[1] * a.groups;
  check_bias("conv_transpose1d", in, o);
  // pad_before[0] is torch's symmetric `padding`; an asymmetric request would otherwise be silently misread.
  LTX_CHECK(a.pad_after[0] == 0, "op",
            "conv_transpose1d: padding is torch's symmetric padding in pad_before[0]; pad_after must be 0");
  LTX_CHECK(a.pad_mode[0] == PadMode::Zeros, "op", "conv_transpose1d: only zero padding");
  LTX_CHECK(a.output_padding >= 0 && (a.output_padding < a.stride[0] || a.output_padding < a.dilation[0]), "op",
            "conv_transpose1d: output_padding ", a.output_padding, " must be smaller than stride or dilation");
  const int64_t len =
      (x[2] - 1) * a.stride[0] - 2 * a.pad_before[0] + a.dilation[0] * (w[2] - 1) + a.output_padding + 1;
  LTX_CHECK(len >= 1, "op", "conv_transpose1d: padding ", a.pad_before[0], " leaves no output for x ", x.str(),
            " and weight ", w.str());
  return {in[0].dtype, Shape{x[0], o, len}};
}

}  // namespace

TensorMeta conv(OpKind kind, const ConvAttrs& a, Inputs in) {
  return kind == OpKind::ConvTranspose1d ? conv_transpose1d(a, in) : conv_nd(a, in);
}

}  // namespace ltx::infer
