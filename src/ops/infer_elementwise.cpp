// Shape/dtype inference for the elementwise family (Add..SnakeBeta): numpy broadcasting, output dtype of input 0.
#include <string>
#include <variant>

#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {
namespace {

std::string shapes_of(Inputs in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i)
    s += (i ? ", " : "") + std::string(dtype_name(in[i].dtype)) + in[i].shape.str();
  return s;
}

int arity(OpKind kind) {
  switch (kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Snake:
      return 2;
    case OpKind::Lerp:
    case OpKind::SnakeBeta:
      return 3;
    default:
      return 1;
  }
}

// The attribute struct each op reads; NoAttrs for the ones without parameters.
bool attrs_match(OpKind kind, const OpAttrs& a) {
  switch (kind) {
    case OpKind::Scale:
      return std::holds_alternative<ScaleAttrs>(a);
    case OpKind::Clamp:
      return std::holds_alternative<ClampAttrs>(a);
    case OpKind::LeakyRelu:
      return std::holds_alternative<LeakyReluAttrs>(a);
    case OpKind::Snake:
    case OpKind::SnakeBeta:
      return std::holds_alternative<SnakeAttrs>(a);
    default:
      return std::holds_alternative<NoAttrs>(a);
  }
}

// Snake/SnakeBeta: x [B, C, ...] with per-channel parameters [C] (BigVGAN's alpha/beta, one per channel).
TensorMeta snake(OpKind kind, Inputs in) {
  const TensorMeta& x = in[0];
  LTX_CHECK(x.shape.rank() >= 2, "op", op_name(kind), ": x must be [B, C, ...], got ", x.shape.str());
  const int64_t c = x.shape[1];
  for (size_t i = 1; i < in.size(); ++i)
    LTX_CHECK(in[i].shape == Shape{c}, "op", op_name(kind), ": per-channel parameter ", i, " must be [", c, "] for x ",
              x.shape.str(), ", got ", in[i].shape.str());
  return {x.dtype, x.shape};
}

}  // namespace

TensorMeta elementwise(OpKind kind, const OpAttrs& a, Inputs in) {
  LTX_CHECK(op_is_elementwise(kind), "op", op_name(kind), ": not an elementwise op");
  LTX_CHECK(attrs_match(kind, a), "op", op_name(kind), ": wrong attribute type");
  LTX_CHECK(static_cast<int>(in.size()) == arity(kind), "op", op_name(kind), ": expects ", arity(kind), " inputs, got ",
            in.size(), " (", shapes_of(in), ")");
  // Kernels compute in f32; integer operands would silently lose precision, so they go through Cast first.
  for (const TensorMeta& m : in)
    LTX_CHECK(dtype_is_float(m.dtype), "op", op_name(kind), ": inputs must be f32, bf16 or f16, got ", shapes_of(in));
  if (kind == OpKind::Clamp) {
    const auto& c = std::get<ClampAttrs>(a);
    LTX_CHECK(c.lo <= c.hi, "op", op_name(kind), ": lo ", c.lo, " exceeds hi ", c.hi);
  }
  if (kind == OpKind::Snake || kind == OpKind::SnakeBeta) return snake(kind, in);
  Shape shape = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    try {
      shape = broadcast_shapes(shape, in[i].shape);
    } catch (const Error&) {
      fail("op", std::string(op_name(kind)) + ": inputs do not broadcast: " + shapes_of(in));
    }
  }
  return {in[0].dtype, shape};
}

}  // namespace ltx::infer
