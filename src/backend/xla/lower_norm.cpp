// Softmax and the normalizations (backend/cpu/norm/norm_ref.cpp): statistics in f32, the variance in two passes
// (mean, then the mean of squared deviations), 1/sqrt as a division, the affine weight as w or 1+w, one rounding.
#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

// v reduced over `axis` and broadcast back to v's shape.
HloValue reduce_back(HloBuilder& b, const HloValue& v, int axis, Reduction kind) {
  const int64_t axes[] = {axis};
  const HloValue r = b.reduce(v, axes, kind);
  std::vector<int64_t> mapping;
  for (int i = 0; i < v.rank(); ++i)
    if (i != axis) mapping.push_back(i);
  return b.broadcast_in_dim(r, v.dims, mapping);
}

HloValue mean_back(HloBuilder& b, const HloValue& v, int axis) {
  const HloValue sum = reduce_back(b, v, axis, Reduction::Sum);
  return b.div(sum, b.splat(static_cast<double>(v.dims[static_cast<size_t>(axis)]), "f32", v.dims));
}

// 1 / sqrt(mean of squares + eps) along `axis`, broadcast back.
HloValue inverse_rms(HloBuilder& b, const HloValue& v, int axis, float eps) {
  const HloValue ms = mean_back(b, b.mul(v, v), axis);
  return b.div(b.splat(1.0, "f32", v.dims), b.unary("sqrt", b.shifted(ms, eps)));
}

// y·w (or y·(1+w)) + bias, the vectors along `axis` (the last for row norms, the channels for GroupNorm).
HloValue affine(const OpLowering& op, HloValue y, int axis) {
  const auto& a = op.attrs_of<NormAttrs>();
  HloBuilder& b = op.b;
  const int64_t mapping[] = {axis};
  size_t next = 1;
  if (a.weight != NormWeight::None) {
    HloValue w = op.f32(next++);
    if (a.weight == NormWeight::OnePlus) w = b.shifted(w, 1.0);
    y = b.mul(y, b.broadcast_in_dim(w, y.dims, mapping));
  }
  if (a.bias) y = b.add(y, b.broadcast_in_dim(op.f32(next), y.dims, mapping));
  return y;
}

}  // namespace

HloValue lower_norm(const OpLowering& op) {
  HloBuilder& b = op.b;
  const HloValue x = op.f32(0);
  const int last = x.rank() - 1;
  switch (op.kind) {
    case OpKind::Softmax: {
      const HloValue v = b.scaled(x, op.attrs_of<SoftmaxAttrs>().scale);
      const HloValue e = b.unary("exponential", b.sub(v, reduce_back(b, v, last, Reduction::Max)));
      return op.result(b.div(e, reduce_back(b, e, last, Reduction::Sum)));
    }
    case OpKind::RmsNorm: {
      const float eps = op.attrs_of<NormAttrs>().eps;
      return op.result(affine(op, b.mul(x, inverse_rms(b, x, last, eps)), last));
    }
    case OpKind::LayerNorm: {
      const float eps = op.attrs_of<NormAttrs>().eps;
      const HloValue d = b.sub(x, mean_back(b, x, last));
      return op.result(affine(op, b.mul(d, inverse_rms(b, d, last, eps)), last));
    }
    case OpKind::GroupNorm: {
      const auto& a = op.attrs_of<NormAttrs>();
      const int64_t groups = a.groups;
      const HloValue g = b.reshape(x, {x.dims[0], groups, x.numel() / (x.dims[0] * groups)});
      const HloValue d = b.sub(g, mean_back(b, g, 2));
      const HloValue y = b.reshape(b.mul(d, inverse_rms(b, d, 2, a.eps)), x.dims);
      return op.result(affine(op, y, 1));
    }
    case OpKind::PixelNorm: {
      const auto& a = op.attrs_of<NormAttrs>();
      const int axis = a.axis < 0 ? a.axis + x.rank() : a.axis;
      const HloValue ms = mean_back(b, b.mul(x, x), axis);
      return op.result(b.div(x, b.unary("sqrt", b.shifted(ms, a.eps))));
    }
    default:
      fail("xla", "not a normalization: " + std::string(op_name(op.kind)));
  }
}

}  // namespace ltx::xla
