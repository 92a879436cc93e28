// Gather, Concat, Slice, Permute, Reshape and Pad (backend/cpu/layout/layout_ref.cpp): exact moves of the operand's
// elements (a quantized table, GGUF or 8-bit float, is decoded to f32 as the reference does).
#include <algorithm>

#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

HloValue pad_edges(HloBuilder& b, const HloValue& x, int axis, int64_t before, int64_t after, PadMode mode) {
  const int64_t n = x.dims[static_cast<size_t>(axis)];
  const int64_t flip[] = {axis};
  std::vector<HloValue> parts;
  auto edge = [&](int64_t count, int64_t from) {  // Replicate: element `from` repeated `count` times
    std::vector<int64_t> dims = x.dims;
    dims[static_cast<size_t>(axis)] = count;
    std::vector<int64_t> mapping;
    for (int i = 0; i < x.rank(); ++i) mapping.push_back(i);
    return b.broadcast_in_dim(b.slice_axis(x, axis, from, from + 1), dims, mapping);
  };
  if (before > 0)
    parts.push_back(mode == PadMode::Replicate ? edge(before, 0)
                                               : b.reverse(b.slice_axis(x, axis, 1, before + 1), flip));
  parts.push_back(x);
  if (after > 0)
    parts.push_back(mode == PadMode::Replicate ? edge(after, n - 1)
                                               : b.reverse(b.slice_axis(x, axis, n - 1 - after, n - 1), flip));
  return b.concat(parts, axis);
}

HloValue lower_layout(const OpLowering& op) {
  HloBuilder& b = op.b;
  const HloValue& x = op.in[0];
  switch (op.kind) {
    case OpKind::Gather: {  // a GGUF table: the rows' bytes gathered, then decoded
      const DType type = op.in_metas[0].dtype;
      if (passed_as_bytes(type))
        return dequantize_rows(b, b.gather_rows(x, op.in[1]), type, op.in_metas[0].shape.dim(-1));
      return b.gather_rows(dtype_is_quantized(type) ? op.f32(0) : x, op.in[1]);  // 8-bit floats: f32 rows
    }
    case OpKind::Concat: {
      const int axis = op.attrs_of<AxisAttrs>().axis;
      return b.concat(op.in, axis < 0 ? axis + x.rank() : axis);
    }
    case OpKind::Slice: {
      const auto& a = op.attrs_of<SliceAttrs>();
      const int axis = a.axis < 0 ? a.axis + x.rank() : a.axis;
      const int64_t n = x.dims[static_cast<size_t>(axis)];
      auto bound = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
      const int64_t start = bound(a.start), extent = op.out.shape[axis];
      return b.slice_axis(x, axis, start, extent == 0 ? start : start + (extent - 1) * a.step + 1, a.step);
    }
    case OpKind::Permute: {
      const auto& a = op.attrs_of<PermuteAttrs>();
      return b.transpose(x, std::span<const int>(a.perm.data(), static_cast<size_t>(a.rank)));
    }
    case OpKind::Reshape:
      return b.reshape(x, op.out_dims());
    case OpKind::Pad: {
      const auto& a = op.attrs_of<PadAttrs>();
      const size_t rank = x.dims.size();
      if (a.mode == PadMode::Zeros || a.mode == PadMode::Constant) {
        const std::vector<int64_t> low(a.before.begin(), a.before.begin() + rank),
            high(a.after.begin(), a.after.begin() + rank), interior(rank, 0);
        const double value = a.mode == PadMode::Constant ? a.value : 0.0;
        return b.pad(x, b.splat(value, x.elem, {}), low, high, interior);
      }
      HloValue y = x;
      for (size_t d = 0; d < rank; ++d)
        if (a.before[d] > 0 || a.after[d] > 0)
          y = pad_edges(b, y, static_cast<int>(d), a.before[d], a.after[d], a.mode);
      return y;
    }
    default:
      fail("xla", "not a layout op: " + std::string(op_name(op.kind)));
  }
}

}  // namespace ltx::xla
