#include "graph/builder.h"

#include "core/error.h"

namespace ltx::ops {
namespace {

Value unary(OpKind kind, Value x, OpAttrs attrs = NoAttrs{}) { return x.graph->op(kind, std::move(attrs), {x}); }
Value binary(OpKind kind, Value a, Value b) { return a.graph->op(kind, NoAttrs{}, {a, b}); }

std::vector<Value> with_optional(std::initializer_list<Value> fixed, std::optional<Value> a,
                                 std::optional<Value> b = std::nullopt) {
  std::vector<Value> v(fixed);
  if (a) v.push_back(*a);
  if (b) v.push_back(*b);
  return v;
}

Value reduce(OpKind kind, Value x, std::span<const int> axes, bool keepdim) {
  ReduceAttrs a;
  a.keepdim = keepdim;
  for (int axis : axes) a.axes[static_cast<size_t>(x.shape().axis(axis))] = true;
  return unary(kind, x, a);
}

}  // namespace

Value matmul(Value a, Value b, bool transpose_a, bool transpose_b) {
  return a.graph->op(OpKind::MatMul, MatMulAttrs{transpose_a, transpose_b}, {a, b});
}

Value linear(Value x, Value weight, std::optional<Value> bias) {
  Value y = matmul(x, weight, false, true);
  return bias ? add(y, *bias) : y;
}

Value add(Value a, Value b) { return binary(OpKind::Add, a, b); }
Value sub(Value a, Value b) { return binary(OpKind::Sub, a, b); }
Value mul(Value a, Value b) { return binary(OpKind::Mul, a, b); }
Value div(Value a, Value b) { return binary(OpKind::Div, a, b); }
Value lerp(Value a, Value b, Value t) { return a.graph->op(OpKind::Lerp, NoAttrs{}, {a, b, t}); }
Value scale(Value x, float s, float bias) { return unary(OpKind::Scale, x, ScaleAttrs{s, bias}); }
Value clamp(Value x, float lo, float hi) { return unary(OpKind::Clamp, x, ClampAttrs{lo, hi}); }
Value silu(Value x) { return unary(OpKind::Silu, x); }
Value gelu(Value x) { return unary(OpKind::Gelu, x); }
Value gelu_tanh(Value x) { return unary(OpKind::GeluTanh, x); }
Value sigmoid(Value x) { return unary(OpKind::Sigmoid, x); }
Value tanh(Value x) { return unary(OpKind::Tanh, x); }
Value leaky_relu(Value x, float slope) { return unary(OpKind::LeakyRelu, x, LeakyReluAttrs{slope}); }
Value snake(Value x, Value alpha, bool log_scale) {
  return x.graph->op(OpKind::Snake, SnakeAttrs{log_scale}, {x, alpha});
}
Value snake_beta(Value x, Value alpha, Value beta, bool log_scale) {
  return x.graph->op(OpKind::SnakeBeta, SnakeAttrs{log_scale}, {x, alpha, beta});
}

Value anti_alias_snake_beta(Value x, Value alpha, Value beta, Value up_filter, Value down_filter, bool log_scale) {
  return x.graph->op(OpKind::AntiAliasSnakeBeta, SnakeAttrs{log_scale}, {x, alpha, beta, up_filter, down_filter});
}
// Same operation order as the reference, x * (1 + scale) + shift, so f32 results round alike.
Value modulate(Value x, Value scale_, Value shift) { return add(mul(x, scale(scale_, 1.0f, 1.0f)), shift); }

Value softmax(Value x, float s) { return unary(OpKind::Softmax, x, SoftmaxAttrs{s}); }

Value rms_norm(Value x, std::optional<Value> weight, float eps, NormWeight form) {
  NormAttrs a;
  a.eps = eps;
  a.weight = weight ? form : NormWeight::None;
  const auto in = with_optional({x}, weight);
  return x.graph->op(OpKind::RmsNorm, a, in);
}

Value layer_norm(Value x, std::optional<Value> weight, std::optional<Value> bias, float eps) {
  LTX_CHECK(weight || !bias, "graph", "layer_norm with a bias needs a weight");
  NormAttrs a;
  a.eps = eps;
  a.weight = weight ? NormWeight::Plain : NormWeight::None;
  a.bias = bias.has_value();
  const auto in = with_optional({x}, weight, bias);
  return x.graph->op(OpKind::LayerNorm, a, in);
}

Value group_norm(Value x, int groups, std::optional<Value> weight, std::optional<Value> bias, float eps) {
  LTX_CHECK(weight || !bias, "graph", "group_norm with a bias needs a weight");
  NormAttrs a;
  a.eps = eps;
  a.groups = groups;
  a.weight = weight ? NormWeight::Plain : NormWeight::None;
  a.bias = bias.has_value();
  const auto in = with_optional({x}, weight, bias);
  return x.graph->op(OpKind::GroupNorm, a, in);
}

Value pixel_norm(Value x, int axis, float eps) {
  NormAttrs a;
  a.eps = eps;
  a.axis = axis;
  return unary(OpKind::PixelNorm, x, a);
}

Value attention(Value q, Value k, Value v, std::optional<Value> mask, float s, bool causal) {
  const auto in = with_optional({q, k, v}, mask);
  return q.graph->op(OpKind::Attention, AttentionAttrs{s, causal}, in);
}

Value rope(Value x, Value cos, Value sin, RopeMode mode) {
  return x.graph->op(OpKind::Rope, RopeAttrs{mode}, {x, cos, sin});
}

Value conv(Value x, Value weight, std::optional<Value> bias, const ConvAttrs& attrs) {
  const auto in = with_optional({x, weight}, bias);
  return x.graph->op(OpKind::Conv, attrs, in);
}

Value conv_transpose1d(Value x, Value weight, std::optional<Value> bias, const ConvAttrs& attrs) {
  const auto in = with_optional({x, weight}, bias);
  return x.graph->op(OpKind::ConvTranspose1d, attrs, in);
}

Value depth_to_space(Value x, int spatial, std::array<int64_t, 3> factor) {
  return unary(OpKind::DepthToSpace, x, ResampleAttrs{spatial, factor});
}
Value space_to_depth(Value x, int spatial, std::array<int64_t, 3> factor) {
  return unary(OpKind::SpaceToDepth, x, ResampleAttrs{spatial, factor});
}
Value upsample_nearest(Value x, int spatial, std::array<int64_t, 3> factor) {
  return unary(OpKind::UpsampleNearest, x, ResampleAttrs{spatial, factor});
}

Value gather(Value table, Value ids) { return binary(OpKind::Gather, table, ids); }

Value concat(std::span<const Value> values, int axis) {
  LTX_CHECK(!values.empty(), "graph", "concat of nothing");
  return values[0].graph->op(OpKind::Concat, AxisAttrs{axis}, values);
}

Value slice(Value x, int axis, int64_t start, int64_t end, int64_t step) {
  return unary(OpKind::Slice, x, SliceAttrs{axis, start, end, step});
}

std::vector<Value> split(Value x, int axis, std::span<const int64_t> sizes) {
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  LTX_CHECK(total == x.dim(axis), "graph", "split sizes add to ", total, " but axis ", axis, " of ", x.shape().str(),
            " has ", x.dim(axis));
  std::vector<Value> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(slice(x, axis, start, start + s));
    start += s;
  }
  return parts;
}

Value permute(Value x, std::span<const int> perm) {
  PermuteAttrs a;
  LTX_CHECK(static_cast<int>(perm.size()) <= kMaxRank, "graph", "permutation too long");
  a.rank = static_cast<int>(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) a.perm[i] = perm[i];
  return unary(OpKind::Permute, x, a);
}
Value permute(Value x, std::initializer_list<int> perm) {
  return permute(x, std::span<const int>(perm.begin(), perm.size()));
}

Value transpose(Value x, int a, int b) {
  int perm[kMaxRank];
  for (int i = 0; i < x.rank(); ++i) perm[i] = i;
  std::swap(perm[x.shape().axis(a)], perm[x.shape().axis(b)]);
  return permute(x, std::span<const int>(perm, static_cast<size_t>(x.rank())));
}

Value reshape(Value x, const Shape& shape) { return unary(OpKind::Reshape, x, ReshapeAttrs{shape}); }

Value pad(Value x, std::span<const int64_t> before, std::span<const int64_t> after, PadMode mode, float value) {
  LTX_CHECK(static_cast<int>(before.size()) == x.rank() && static_cast<int>(after.size()) == x.rank(), "graph",
            "pad needs before/after for each of the ", x.rank(), " dimensions");
  PadAttrs a;
  for (int i = 0; i < x.rank(); ++i) {
    a.before[static_cast<size_t>(i)] = before[static_cast<size_t>(i)];
    a.after[static_cast<size_t>(i)] = after[static_cast<size_t>(i)];
  }
  a.mode = mode;
  a.value = value;
  return unary(OpKind::Pad, x, a);
}

Value reduce_sum(Value x, std::span<const int> axes, bool keepdim) {
  return reduce(OpKind::ReduceSum, x, axes, keepdim);
}
Value reduce_mean(Value x, std::span<const int> axes, bool keepdim) {
  return reduce(OpKind::ReduceMean, x, axes, keepdim);
}
Value reduce_max(Value x, std::span<const int> axes, bool keepdim) {
  return reduce(OpKind::ReduceMax, x, axes, keepdim);
}
Value reduce_min(Value x, std::span<const int> axes, bool keepdim) {
  return reduce(OpKind::ReduceMin, x, axes, keepdim);
}

Value cast(Value x, DType to) { return unary(OpKind::Cast, x, CastAttrs{to}); }

}  // namespace ltx::ops
