// Ops as free functions over symbolic tensors: model code reads like the math. Each call adds one node (or a few,
// for composites like linear and split) to the operands' graph; shapes are checked as the node is added.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace ltx::ops {

// linear algebra
Value matmul(Value a, Value b, bool transpose_a = false, bool transpose_b = false);
// x [..., K] · Wᵀ (+ bias) with W [N, K] as PyTorch's nn.Linear stores it.
Value linear(Value x, Value weight, std::optional<Value> bias = std::nullopt);

// elementwise (numpy broadcasting)
Value add(Value a, Value b);
Value sub(Value a, Value b);
Value mul(Value a, Value b);
Value div(Value a, Value b);
Value lerp(Value a, Value b, Value t);
Value scale(Value x, float scale, float bias = 0.0f);
Value clamp(Value x, float lo, float hi);
Value silu(Value x);
Value gelu(Value x);
Value gelu_tanh(Value x);
Value sigmoid(Value x);
Value tanh(Value x);
Value leaky_relu(Value x, float slope);
Value snake(Value x, Value alpha, bool log_scale);
Value snake_beta(Value x, Value alpha, Value beta, bool log_scale);
// BigVGAN-v2 Activation1d with SnakeBeta in one op (OpKind::AntiAliasSnakeBeta).
Value anti_alias_snake_beta(Value x, Value alpha, Value beta, Value up_filter, Value down_filter, bool log_scale);
// x·(1 + scale) + shift: AdaLN modulation.
Value modulate(Value x, Value scale, Value shift);

// normalization
Value softmax(Value x, float scale = 1.0f);
Value rms_norm(Value x, std::optional<Value> weight, float eps, NormWeight form = NormWeight::Plain);
Value layer_norm(Value x, std::optional<Value> weight, std::optional<Value> bias, float eps);
Value group_norm(Value x, int groups, std::optional<Value> weight, std::optional<Value> bias, float eps);
Value pixel_norm(Value x, int axis, float eps);

// attention and positions
Value attention(Value q, Value k, Value v, std::optional<Value> mask = std::nullopt, float scale = 0.0f,
                bool causal = false);
Value rope(Value x, Value cos, Value sin, RopeMode mode);

// convolution and resampling
Value conv(Value x, Value weight, std::optional<Value> bias, const ConvAttrs& attrs);
Value conv_transpose1d(Value x, Value weight, std::optional<Value> bias, const ConvAttrs& attrs);
Value depth_to_space(Value x, int spatial, std::array<int64_t, 3> factor);
Value space_to_depth(Value x, int spatial, std::array<int64_t, 3> factor);
Value upsample_nearest(Value x, int spatial, std::array<int64_t, 3> factor);

// indexing and layout
Value gather(Value table, Value ids);
Value concat(std::span<const Value> values, int axis);
Value slice(Value x, int axis, int64_t start, int64_t end, int64_t step = 1);
std::vector<Value> split(Value x, int axis, std::span<const int64_t> sizes);
Value permute(Value x, std::span<const int> perm);
Value permute(Value x, std::initializer_list<int> perm);
Value transpose(Value x, int a, int b);
Value reshape(Value x, const Shape& shape);
Value pad(Value x, std::span<const int64_t> before, std::span<const int64_t> after, PadMode mode, float value = 0);

// reductions (f32 accumulation)
Value reduce_sum(Value x, std::span<const int> axes, bool keepdim = false);
Value reduce_mean(Value x, std::span<const int> axes, bool keepdim = false);
Value reduce_max(Value x, std::span<const int> axes, bool keepdim = false);
Value reduce_min(Value x, std::span<const int> axes, bool keepdim = false);

Value cast(Value x, DType to);

}  // namespace ltx::ops
