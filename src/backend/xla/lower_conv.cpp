// Convolutions (backend/cpu/conv/conv_ref.cpp) and BigVGAN's anti-aliased SnakeBeta (resample/resample_ref.cpp):
// f32 taps summed in f32, the bias added, one rounding. Edge padding (replicate, reflect) is materialized before the
// convolution, zero padding is the convolution's own.
#include <algorithm>

#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

HloValue add_channel_bias(const OpLowering& op, const HloValue& y, size_t bias_input) {
  if (op.in.size() <= bias_input) return y;
  const int64_t channel_axis[] = {1};
  return op.b.add(y, op.b.broadcast_in_dim(op.f32(bias_input), y.dims, channel_axis));
}

HloValue conv(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& a = op.attrs_of<ConvAttrs>();
  HloValue x = op.f32(0);
  HloBuilder::ConvWindow window;
  for (int d = 0; d < a.spatial; ++d) {
    int64_t before = a.pad_before[static_cast<size_t>(d)], after = a.pad_after[static_cast<size_t>(d)];
    if (a.pad_mode[static_cast<size_t>(d)] != PadMode::Zeros) {
      x = pad_edges(b, x, 2 + d, before, after, a.pad_mode[static_cast<size_t>(d)]);
      before = after = 0;
    }
    window.stride.push_back(a.stride[static_cast<size_t>(d)]);
    window.rhs_dilation.push_back(a.dilation[static_cast<size_t>(d)]);
    window.lhs_dilation.push_back(1);
    window.pad_low.push_back(before);
    window.pad_high.push_back(after);
  }
  window.feature_groups = a.groups;
  return op.result(add_channel_bias(op, b.convolution(x, op.f32(1), window, "f32"), 2));
}

// A transposed convolution as a correlation over the zero-interleaved input with the flipped kernel, its input and
// output channels swapped per group: weight [C, O/G, K] -> [O, C/G, K].
HloValue conv_transpose1d(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& a = op.attrs_of<ConvAttrs>();
  const HloValue x = op.f32(0), w = op.f32(1);
  const int64_t groups = a.groups, c = w.dims[0], o_per_group = w.dims[1], k = w.dims[2];
  const int perm[] = {0, 2, 1, 3};
  HloValue kernel = b.transpose(b.reshape(w, {groups, c / groups, o_per_group, k}), perm);
  kernel = b.reshape(kernel, {groups * o_per_group, c / groups, k});
  const int64_t flip[] = {2};
  kernel = b.reverse(kernel, flip);
  // Padding beyond the kernel's span crops the full correlation instead (a negative pad): crop after it.
  const int64_t span = a.dilation[0] * (k - 1);
  const int64_t low = span - a.pad_before[0], high = span - a.pad_before[0] + a.output_padding;
  HloBuilder::ConvWindow window;
  window.stride = {1};
  window.lhs_dilation = {a.stride[0]};
  window.rhs_dilation = {a.dilation[0]};
  window.pad_low = {std::max<int64_t>(low, 0)};
  window.pad_high = {std::max<int64_t>(high, 0)};
  window.feature_groups = groups;
  HloValue y = b.convolution(x, kernel, window, "f32");
  const int64_t length = y.dims[2];
  y = b.slice_axis(y, 2, std::max<int64_t>(-low, 0), length - std::max<int64_t>(-high, 0));
  return op.result(add_channel_bias(op, y, 2));
}

// x [B, C, L]: replicate pad, x2 transposed-conv upsample by `up`, crop to 2L and gain 2, SnakeBeta per channel,
// replicate pad, stride-2 low-pass by `down` -> [B, C, L]. Every intermediate in f32 (resample_ref.cpp).
HloValue anti_alias_snake_beta(const OpLowering& op) {
  HloBuilder& b = op.b;
  const bool log_scale = op.attrs_of<SnakeAttrs>().log_scale;
  const HloValue x = op.f32(0);
  const int64_t batch = x.dims[0], channels = x.dims[1], length = x.dims[2];
  const HloValue up = op.f32(3), down = op.f32(4);
  const int64_t ku = up.numel(), kd = down.numel();
  const int64_t pad = ku / 2 - 1;

  // Rows as batch: [B·C, 1, L], one filter for all.
  HloValue rows = pad_edges(b, b.reshape(x, {batch * channels, 1, length}), 2, pad, pad, PadMode::Replicate);
  const int64_t flip[] = {2};
  HloBuilder::ConvWindow up_window{{1}, {ku - 1}, {ku - 1}, {2}, {1}, 1};
  HloValue y = b.convolution(rows, b.reverse(b.reshape(up, {1, 1, ku}), flip), up_window, "f32");
  const int64_t crop = 2 * pad + (ku - 2) / 2;
  y = b.scaled(b.slice_axis(y, 2, crop, crop + 2 * length), 2.0);

  y = b.reshape(y, {batch, channels, 2 * length});
  const int64_t channel_axis[] = {1};
  HloValue alpha = b.broadcast_in_dim(op.f32(1), y.dims, channel_axis);
  HloValue beta = b.broadcast_in_dim(op.f32(2), y.dims, channel_axis);
  if (log_scale) {
    alpha = b.unary("exponential", alpha);
    beta = b.unary("exponential", beta);
  }
  y = snake(b, y, alpha, beta);

  rows = pad_edges(b, b.reshape(y, {batch * channels, 1, 2 * length}), 2, kd / 2 - 1, kd / 2, PadMode::Replicate);
  HloBuilder::ConvWindow down_window{{2}, {0}, {0}, {1}, {1}, 1};
  const HloValue out = b.convolution(rows, b.reshape(down, {1, 1, kd}), down_window, "f32");
  return op.result(b.reshape(out, x.dims));
}

}  // namespace

HloValue lower_conv(const OpLowering& op) {
  switch (op.kind) {
    case OpKind::Conv:
      return conv(op);
    case OpKind::ConvTranspose1d:
      return conv_transpose1d(op);
    case OpKind::AntiAliasSnakeBeta:
      return anti_alias_snake_beta(op);
    default:
      fail("xla", "not a convolution: " + std::string(op_name(op.kind)));
  }
}

}  // namespace ltx::xla
