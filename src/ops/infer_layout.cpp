// Shape/dtype inference for indexing and layout: Gather, Concat, Slice, Permute, Reshape, Pad.
#include <algorithm>
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

// Every op here except Gather moves elements of one input; those must be a plain dtype.
const TensorMeta& single_plain_input(OpKind kind, Inputs in) {
  LTX_CHECK(in.size() == 1, "op", op_name(kind), ": expects 1 input, got ", in.size(), " (", shapes_of(in), ")");
  LTX_CHECK(!dtype_is_quantized(in[0].dtype), "op", op_name(kind), ": input cannot be quantized, got ", shapes_of(in));
  return in[0];
}

TensorMeta gather(Inputs in) {
  LTX_CHECK(in.size() == 2, "op", "gather: expects 2 inputs (table, ids), got ", in.size(), " (", shapes_of(in), ")");
  const TensorMeta& table = in[0];
  const TensorMeta& ids = in[1];
  LTX_CHECK(table.shape.rank() == 2, "op", "gather: table must be [V, D], got ", table.shape.str());
  LTX_CHECK(ids.dtype == DType::I32 || ids.dtype == DType::I64, "op", "gather: ids must be i32 or i64, got ",
            shapes_of(in));
  LTX_CHECK(ids.shape.rank() < kMaxRank, "op", "gather: ids ", ids.shape.str(), " leave no room for the row axis");
  Shape out = ids.shape;
  out.push_back(table.shape[1]);
  // Quantized rows are dequantized: the output is f32 (the precision the blocks decode to).
  return {dtype_is_quantized(table.dtype) ? DType::F32 : table.dtype, out};
}

TensorMeta concat(const AxisAttrs& a, Inputs in) {
  LTX_CHECK(!in.empty(), "op", "concat: needs at least one input");
  const TensorMeta& first = in[0];
  LTX_CHECK(first.shape.rank() >= 1, "op", "concat: inputs must have at least one dimension, got ", shapes_of(in));
  LTX_CHECK(a.axis >= -first.shape.rank() && a.axis < first.shape.rank(), "op", "concat: axis ", a.axis,
            " out of range for ", shapes_of(in));
  const int axis = first.shape.axis(a.axis);
  Shape out = first.shape;
  out[axis] = 0;
  for (const TensorMeta& m : in) {
    LTX_CHECK(!dtype_is_quantized(m.dtype) && m.dtype == first.dtype, "op",
              "concat: inputs must share one plain dtype, got ", shapes_of(in));
    bool same = m.shape.rank() == first.shape.rank();
    for (int i = 0; same && i < first.shape.rank(); ++i) same = i == axis || m.shape[i] == first.shape[i];
    LTX_CHECK(same, "op", "concat: shapes differ outside axis ", axis, ": ", shapes_of(in));
    out[axis] += m.shape[axis];
  }
  return {first.dtype, out};
}

// Python slice semantics for step > 0: negative indices count from the end, then both clamp to [0, n].
int64_t slice_extent(int64_t start, int64_t end, int64_t step, int64_t n) {
  const auto clamp_index = [n](int64_t i) { return std::clamp(i < 0 ? i + n : i, int64_t{0}, n); };
  const int64_t s = clamp_index(start);
  const int64_t e = clamp_index(end);
  return e > s ? (e - s + step - 1) / step : 0;
}

TensorMeta slice(const SliceAttrs& a, Inputs in) {
  const TensorMeta& x = single_plain_input(OpKind::Slice, in);
  LTX_CHECK(a.axis >= -x.shape.rank() && a.axis < x.shape.rank(), "op", "slice: axis ", a.axis, " out of range for ",
            x.shape.str());
  LTX_CHECK(a.step >= 1, "op", "slice: step must be >= 1, got ", a.step);
  const int axis = x.shape.axis(a.axis);
  const int64_t n = x.shape[axis];
  Shape out = x.shape;
  out[axis] = slice_extent(a.start, a.end, a.step, n);
  return {x.dtype, out};
}

TensorMeta permute(const PermuteAttrs& a, Inputs in) {
  const TensorMeta& x = single_plain_input(OpKind::Permute, in);
  LTX_CHECK(a.rank == x.shape.rank(), "op", "permute: permutation of ", a.rank, " axes for x ", x.shape.str());
  bool seen[kMaxRank] = {};
  Shape out;
  for (int i = 0; i < a.rank; ++i) {
    const int p = a.perm[static_cast<size_t>(i)];
    LTX_CHECK(p >= 0 && p < a.rank && !seen[p], "op", "permute: not a permutation of ", a.rank, " axes (entry ", i,
              " is ", p, ") for x ", x.shape.str());
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  return {x.dtype, out};
}

TensorMeta reshape(const ReshapeAttrs& a, Inputs in) {
  const TensorMeta& x = single_plain_input(OpKind::Reshape, in);
  LTX_CHECK(a.shape.numel() == x.shape.numel(), "op", "reshape: cannot reshape ", x.shape.str(), " (", x.shape.numel(),
            " elements) to ", a.shape.str(), " (", a.shape.numel(), ")");
  return {x.dtype, a.shape};
}

TensorMeta pad(const PadAttrs& a, Inputs in) {
  const TensorMeta& x = single_plain_input(OpKind::Pad, in);
  Shape out = x.shape;
  for (int i = 0; i < kMaxRank; ++i) {
    const int64_t before = a.before[static_cast<size_t>(i)];
    const int64_t after = a.after[static_cast<size_t>(i)];
    if (i >= x.shape.rank()) {
      LTX_CHECK(before == 0 && after == 0, "op", "pad: padding given for dimension ", i, " of x ", x.shape.str());
      continue;
    }
    LTX_CHECK(before >= 0 && after >= 0, "op", "pad: negative padding (", before, ", ", after, ") in dimension ", i,
              " of x ", x.shape.str());
    const int64_t n = x.shape[i];
    if (a.mode == PadMode::Reflect)  // reflection excludes the edge, so it needs pad < size (as torch's)
      LTX_CHECK(std::max(before, after) < n, "op", "pad: reflect padding (", before, ", ", after,
                ") must be smaller than dimension ", i, " of x ", x.shape.str());
    if (a.mode == PadMode::Replicate && before + after > 0)
      LTX_CHECK(n > 0, "op", "pad: cannot replicate an empty dimension ", i, " of x ", x.shape.str());
    out[i] = n + before + after;
  }
  return {x.dtype, out};
}

}  // namespace

TensorMeta layout(OpKind kind, const OpAttrs& a, Inputs in) {
  switch (kind) {
    case OpKind::Gather:
      return gather(in);
    case OpKind::Concat:
      return concat(attrs_as<AxisAttrs>(kind, a), in);
    case OpKind::Slice:
      return slice(attrs_as<SliceAttrs>(kind, a), in);
    case OpKind::Permute:
      return permute(attrs_as<PermuteAttrs>(kind, a), in);
    case OpKind::Reshape:
      return reshape(attrs_as<ReshapeAttrs>(kind, a), in);
    case OpKind::Pad:
      return pad(attrs_as<PadAttrs>(kind, a), in);
    default:
      fail("op", std::string(op_name(kind)) + ": not a layout op");
  }
}

}  // namespace ltx::infer
