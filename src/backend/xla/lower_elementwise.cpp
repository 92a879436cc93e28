// Elementwise ops and Cast, as the reference computes them (backend/cpu/elementwise/elementwise_ref.cpp,
// cast_ref.cpp): every operand broadcast to the output and widened to f32, the expression in the reference's order
// (a division where it divides), one rounding to the output dtype.
#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

// A per-channel vector [C] (Snake's alpha, beta) as the output's shape, channels on axis 1; exp'd when stored as log.
HloValue per_channel(const OpLowering& op, size_t i, bool log_scale) {
  const int64_t channel_axis[] = {1};
  HloValue v = op.b.broadcast_in_dim(op.f32(i), op.out_dims(), channel_axis);
  return log_scale ? op.b.unary("exponential", v) : v;
}

// 1 / (1 + exp(-x))
HloValue sigmoid(HloBuilder& b, const HloValue& x) {
  const HloValue one = b.splat(1.0, "f32", x.dims);
  return b.div(one, b.add(one, b.unary("exponential", b.unary("negate", x))));
}

}  // namespace

HloValue snake(HloBuilder& b, const HloValue& x, const HloValue& alpha, const HloValue& beta) {
  const HloValue s = b.unary("sine", b.mul(x, alpha));
  const HloValue inv = b.div(b.splat(1.0, "f32", x.dims), b.shifted(beta, 1e-9f));
  return b.add(x, b.mul(inv, b.mul(s, s)));
}

HloValue lower_elementwise(const OpLowering& op) {
  HloBuilder& b = op.b;
  if (op.kind == OpKind::Cast) {
    const Elem to = elem_of(op.out.dtype);
    return is_integer(op.in[0].elem) && is_integer(to) ? b.convert(op.in[0], to)
                                                       : b.convert(op.f32(0), to);  // the reference goes through f32
  }
  const HloValue x = op.f32_broadcast(0);
  switch (op.kind) {
    case OpKind::Add:
      return op.result(b.add(x, op.f32_broadcast(1)));
    case OpKind::Sub:
      return op.result(b.sub(x, op.f32_broadcast(1)));
    case OpKind::Mul:
      return op.result(b.mul(x, op.f32_broadcast(1)));
    case OpKind::Div:
      return op.result(b.div(x, op.f32_broadcast(1)));
    case OpKind::Lerp: {
      const HloValue to = op.f32_broadcast(1), t = op.f32_broadcast(2);
      return op.result(b.add(x, b.mul(t, b.sub(to, x))));
    }
    case OpKind::Scale: {
      const auto& a = op.attrs_of<ScaleAttrs>();
      return op.result(b.shifted(b.scaled(x, a.scale), a.bias));
    }
    case OpKind::Clamp: {
      const auto& a = op.attrs_of<ClampAttrs>();
      return op.result(b.clamp(b.splat(a.lo, "f32", {}), x, b.splat(a.hi, "f32", {})));
    }
    case OpKind::Silu: {
      const HloValue one = b.splat(1.0, "f32", x.dims);
      return op.result(b.div(x, b.add(one, b.unary("exponential", b.unary("negate", x)))));
    }
    case OpKind::Gelu: {
      const HloValue e = b.erf(b.scaled(x, 0.70710678118654752f));
      return op.result(b.mul(b.scaled(x, 0.5), b.shifted(e, 1.0)));
    }
    case OpKind::GeluTanh: {
      const HloValue cube = b.mul(b.mul(b.scaled(x, 0.044715f), x), x);
      const HloValue t = b.unary("tanh", b.scaled(b.add(x, cube), 0.79788456080286536f));
      return op.result(b.mul(b.scaled(x, 0.5), b.shifted(t, 1.0)));
    }
    case OpKind::Sigmoid:
      return op.result(sigmoid(b, x));
    case OpKind::Tanh:
      return op.result(b.unary("tanh", x));
    case OpKind::LeakyRelu: {
      const float slope = op.attrs_of<LeakyReluAttrs>().slope;
      const HloValue positive = b.compare(x, b.splat(0.0, "f32", x.dims), Compare::GT);
      return op.result(b.select(positive, x, b.scaled(x, slope)));
    }
    case OpKind::Snake: {
      const bool log_scale = op.attrs_of<SnakeAttrs>().log_scale;
      const HloValue alpha = per_channel(op, 1, log_scale);
      return op.result(snake(b, x, alpha, alpha));
    }
    case OpKind::SnakeBeta: {
      const bool log_scale = op.attrs_of<SnakeAttrs>().log_scale;
      return op.result(snake(b, x, per_channel(op, 1, log_scale), per_channel(op, 2, log_scale)));
    }
    default:
      fail("xla", "not an elementwise op: " + std::string(op_name(op.kind)));
  }
}

}  // namespace ltx::xla
