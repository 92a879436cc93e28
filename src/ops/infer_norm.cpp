// Shape/dtype inference for normalization: Softmax, RmsNorm, LayerNorm, GroupNorm, PixelNorm. The output has
// x's shape and dtype; weight and bias (when present) follow x as inputs 1 and 2.
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

// Checks the optional weight/bias inputs: each must be [n] (the normalized features or the channels).
void check_affine(OpKind kind, const NormAttrs& a, Inputs in, int64_t n, const char* what) {
  const size_t want = 1 + (a.weight != NormWeight::None ? 1 : 0) + (a.bias ? 1 : 0);
  LTX_CHECK(in.size() == want, "op", op_name(kind), ": expects ", want, " inputs (x",
            a.weight != NormWeight::None ? ", weight" : "", a.bias ? ", bias" : "", "), got ", in.size(), " (",
            shapes_of(in), ")");
  for (size_t i = 1; i < in.size(); ++i) {
    const char* role = i == 1 && a.weight != NormWeight::None ? "weight" : "bias";
    LTX_CHECK(in[i].shape == Shape{n}, "op", op_name(kind), ": ", role, " must be [", n, "] (", what, " of x ",
              in[0].shape.str(), "), got ", in[i].shape.str());
    LTX_CHECK(dtype_is_float(in[i].dtype), "op", op_name(kind), ": weight/bias must be a float dtype, got ",
              shapes_of(in));
  }
}

}  // namespace

TensorMeta norm(OpKind kind, const OpAttrs& attrs, Inputs in) {
  LTX_CHECK(!in.empty(), "op", op_name(kind), ": needs an input");
  const TensorMeta& x = in[0];
  LTX_CHECK(dtype_is_float(x.dtype), "op", op_name(kind), ": x must be f32, bf16 or f16, got ", shapes_of(in));
  LTX_CHECK(x.shape.rank() >= 1, "op", op_name(kind), ": x must have at least one dimension, got ", x.shape.str());
  if (kind == OpKind::Softmax) {
    LTX_CHECK(std::holds_alternative<SoftmaxAttrs>(attrs), "op", op_name(kind), ": wrong attribute type");
    LTX_CHECK(in.size() == 1, "op", op_name(kind), ": expects 1 input, got ", in.size(), " (", shapes_of(in), ")");
    return x;
  }
  const NormAttrs* a = std::get_if<NormAttrs>(&attrs);
  LTX_CHECK(a != nullptr, "op", op_name(kind), ": wrong attribute type");
  LTX_CHECK(a->eps >= 0.0f, "op", op_name(kind), ": eps must be >= 0, got ", a->eps);
  switch (kind) {
    case OpKind::RmsNorm:
    case OpKind::LayerNorm:
      check_affine(kind, *a, in, x.shape.dim(-1), "last dimension");
      break;
    case OpKind::GroupNorm: {
      LTX_CHECK(x.shape.rank() >= 2, "op", op_name(kind), ": x must be [B, C, ...], got ", x.shape.str());
      LTX_CHECK(a->groups >= 1 && x.shape[1] % a->groups == 0, "op", op_name(kind), ": ", x.shape[1], " channels of x ",
                x.shape.str(), " do not split into ", a->groups, " groups");
      check_affine(kind, *a, in, x.shape[1], "channels");
      break;
    }
    case OpKind::PixelNorm: {
      LTX_CHECK(a->axis >= -x.shape.rank() && a->axis < x.shape.rank(), "op", op_name(kind), ": axis ", a->axis,
                " out of range for x ", x.shape.str());
      LTX_CHECK(a->weight == NormWeight::None && !a->bias, "op", op_name(kind), ": takes no weight or bias");
      LTX_CHECK(in.size() == 1, "op", op_name(kind), ": expects 1 input, got ", in.size(), " (", shapes_of(in), ")");
      break;
    }
    default:
      fail("op", std::string(op_name(kind)) + ": not a normalization op");
  }
  return x;
}

}  // namespace ltx::infer
