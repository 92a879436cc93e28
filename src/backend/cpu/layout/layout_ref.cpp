// Reference kernels for indexing and layout: Gather, Concat, Slice, Permute, Reshape, Pad. Elements are copied
// bytewise (exact for every plain dtype); quantized Gather rows are decoded with dequantize_row.
#include <algorithm>
#include <cstring>
#include <variant>

#include "backend/cpu/kernels.h"
#include "backend/cpu/padding.h"
#include "core/error.h"
#include "core/quant.h"

namespace ltx::cpu::ref {
namespace {

// Copies one element of `src` at index `idx` to the contiguous output's element `pos`.
void copy_element(const Tensor& src, const int64_t* idx, const Tensor& out, int64_t pos) {
  const size_t es = dtype_block_bytes(out.dtype());
  std::memcpy(out.raw() + static_cast<size_t>(pos) * es, src.raw() + element_byte_offset(src, idx), es);
}

// out[..., :] = table[ids[...], :]; ids outside [0, V) are an error, as torch.nn.functional.embedding's.
void gather(const Tensor& table, const Tensor& ids, const Tensor& out) {
  const int64_t n_rows = table.shape()[0];
  const int64_t dim = table.shape()[1];
  const bool quantized = dtype_is_quantized(table.dtype());
  int64_t pos = 0;
  for_each_index(ids.shape(), [&](const int64_t* at) {
    const int64_t id = load_as_i64(ids.raw() + element_byte_offset(ids, at), ids.dtype());
    LTX_CHECK(id >= 0 && id < n_rows, "cpu", "gather: id ", id, " at position ", pos, " is out of range for table ",
              table.describe());
    if (quantized) {  // rows start on block boundaries (Tensor keeps quantized views whole-row)
      const int64_t elem = id * table.strides()[0];
      const size_t bytes =
          static_cast<size_t>(elem) / dtype_block_elems(table.dtype()) * dtype_block_bytes(table.dtype());
      dequantize_row(table.dtype(), table.raw() + bytes, out.data<float>() + pos * dim, dim);
    } else {
      for (int64_t j = 0; j < dim; ++j) {
        const int64_t idx[2] = {id, j};
        copy_element(table, idx, out, pos * dim + j);
      }
    }
    ++pos;
  });
}

// Each input lands in the output at its running offset along the axis.
void concat(const AxisAttrs& a, Inputs in, const Tensor& out) {
  const int axis = out.shape().axis(a.axis);
  const Shape out_strides = out.shape().contiguous_strides();
  int64_t offset = 0;
  for (const Tensor& x : in) {
    for_each_index(x.shape(), [&](const int64_t* idx) {
      int64_t pos = offset * out_strides[axis];
      for (int i = 0; i < x.rank(); ++i) pos += idx[i] * out_strides[i];
      copy_element(x, idx, out, pos);
    });
    offset += x.shape()[axis];
  }
}

void slice(const SliceAttrs& a, const Tensor& x, const Tensor& out) {
  const int axis = x.shape().axis(a.axis);
  const int64_t n = x.shape()[axis];
  // The same normalization as shape inference (infer_layout.cpp): negative counts from the end, clamp to [0, n].
  const int64_t start = std::clamp(a.start < 0 ? a.start + n : a.start, int64_t{0}, n);
  int64_t pos = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    int64_t idx[kMaxRank];
    std::copy(o, o + x.rank(), idx);
    idx[axis] = start + o[axis] * a.step;
    copy_element(x, idx, out, pos++);
  });
}

void permute(const PermuteAttrs& a, const Tensor& x, const Tensor& out) {
  int64_t pos = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    int64_t idx[kMaxRank];
    for (int i = 0; i < a.rank; ++i) idx[a.perm[static_cast<size_t>(i)]] = o[i];
    copy_element(x, idx, out, pos++);
  });
}

// Row-major order is kept: the k-th element of x (in its logical order) is the k-th of the output.
void reshape(const Tensor& x, const Tensor& out) {
  int64_t pos = 0;
  for_each_index(x.shape(), [&](const int64_t* idx) { copy_element(x, idx, out, pos++); });
}

void pad(const PadAttrs& a, const Tensor& x, const Tensor& out) {
  const float fill = a.mode == PadMode::Constant ? a.value : 0.0f;
  const size_t es = dtype_block_bytes(out.dtype());
  int64_t pos = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    int64_t idx[kMaxRank];
    bool inside = true;
    for (int i = 0; i < x.rank() && inside; ++i) {
      idx[i] = pad_source_index(o[i] - a.before[static_cast<size_t>(i)], x.shape()[i], a.mode);
      inside = idx[i] >= 0;
    }
    if (inside)
      copy_element(x, idx, out, pos);
    else
      store_from_f32(out.raw() + static_cast<size_t>(pos) * es, out.dtype(), fill);
    ++pos;
  });
}

}  // namespace

void layout(OpKind kind, const OpAttrs& a, Inputs in, const Tensor& out) {
  switch (kind) {
    case OpKind::Gather:
      return gather(in[0], in[1], out);
    case OpKind::Concat:
      return concat(attrs_as<AxisAttrs>(kind, a), in, out);
    case OpKind::Slice:
      return slice(attrs_as<SliceAttrs>(kind, a), in[0], out);
    case OpKind::Permute:
      return permute(attrs_as<PermuteAttrs>(kind, a), in[0], out);
    case OpKind::Reshape:
      return reshape(in[0], out);
    case OpKind::Pad:
      return pad(attrs_as<PadAttrs>(kind, a), in[0], out);
    default:
      fail("cpu", std::string(op_name(kind)) + ": not a layout op");
  }
}

}  // namespace ltx::cpu::ref
