// opt::try_layout: Slice, Permute, Gather and Concat of plain dtypes as block copies, parallel over rows. The reference
// (layout_ref.cpp) copies one element at a time through a full index walk; here the source is described as a
// strided view of the output's shape, adjacent axes that stay contiguous are merged, and each innermost run is one
// memcpy when it is contiguous in the source (a strided element loop otherwise). Bytes are moved unchanged, so the
// result is identical to the reference's. Quantized dtypes and out-of-range gather ids go to the reference (the
// latter so that its error is the one reported).
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/optimized.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

// A source view with the output's shape: element `idx` of the output is at src + sum(idx[i] * strides[i]) * es.
struct StridedView {
  const std::byte* src = nullptr;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};  // in elements
};

// Drops size-1 axes and merges axis i into i+1 where the source is contiguous across them.
StridedView coalesce(const StridedView& v) {
  StridedView c;
  c.src = v.src;
  for (int i = 0; i < v.rank; ++i) {
    if (v.shape[i] == 1) continue;
    if (c.rank > 0 && c.strides[c.rank - 1] == v.strides[i] * v.shape[i]) {
      c.shape[c.rank - 1] *= v.shape[i];
      c.strides[c.rank - 1] = v.strides[i];
    } else {
      c.shape[c.rank] = v.shape[i];
      c.strides[c.rank] = v.strides[i];
      ++c.rank;
    }
  }
  if (c.rank == 0) {  // a single element
    c.rank = 1;
    c.shape[0] = 1;
    c.strides[0] = 1;
  }
  return c;
}

template <typename T>
void copy_strided_row(const std::byte* src, int64_t stride, int64_t n, std::byte* dst) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t j = 0; j < n; ++j) d[j] = s[j * stride];
}

// out (contiguous, `es` bytes per element) = the view, row by row over the merged innermost axis.
void copy_view(const StridedView& view, size_t es, std::byte* out) {
  const StridedView v = coalesce(view);
  const int last = v.rank - 1;
  const int64_t row_len = v.shape[last];
  const int64_t inner_stride = v.strides[last];
  int64_t n_rows = 1;
  for (int i = 0; i < last; ++i) n_rows *= v.shape[i];
  const size_t row_bytes = static_cast<size_t>(row_len) * es;
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((size_t{64} << 10) / std::max<size_t>(row_bytes, 1)));
  parallel_for(n_rows, grain, [&](int64_t begin, int64_t end) {
    int64_t idx[kMaxRank] = {};  // the row's outer index, unravelled once and then stepped
    for (int64_t r = begin, i = last - 1; i >= 0; --i) {
      idx[i] = r % v.shape[i];
      r /= v.shape[i];
    }
    for (int64_t r = begin; r < end; ++r) {
      int64_t off = 0;
      for (int i = 0; i < last; ++i) off += idx[i] * v.strides[i];
      const std::byte* src = v.src + static_cast<size_t>(off) * es;
      std::byte* dst = out + static_cast<size_t>(r) * row_bytes;
      if (inner_stride == 1)
        std::memcpy(dst, src, row_bytes);
      else if (es == 4)
        copy_strided_row<uint32_t>(src, inner_stride, row_len, dst);
      else if (es == 2)
        copy_strided_row<uint16_t>(src, inner_stride, row_len, dst);
      else if (es == 8)
        copy_strided_row<uint64_t>(src, inner_stride, row_len, dst);
      else
        for (int64_t j = 0; j < row_len; ++j)
          std::memcpy(dst + static_cast<size_t>(j) * es, src + static_cast<size_t>(j * inner_stride) * es, es);
      for (int i = last - 1; i >= 0; --i) {
        if (++idx[i] < v.shape[i]) break;
        idx[i] = 0;
      }
    }
  });
}

// The same normalization as the reference and shape inference: negative start counts from the end, clamped.
StridedView slice_view(const SliceAttrs& a, const Tensor& x, const Tensor& out) {
  const int axis = x.shape().axis(a.axis);
  const int64_t n = x.shape()[axis];
  const int64_t start = std::clamp(a.start < 0 ? a.start + n : a.start, int64_t{0}, n);
  StridedView v;
  v.rank = out.rank();
  for (int i = 0; i < v.rank; ++i) {
    v.shape[i] = out.shape()[i];
    v.strides[i] = x.strides()[i];
  }
  v.strides[axis] *= a.step;
  const int64_t first = start < n ? start * x.strides()[axis] : 0;  // an empty slice may start at n
  v.src = x.raw() + static_cast<size_t>(first) * dtype_block_bytes(x.dtype());
  return v;
}

StridedView permute_view(const PermuteAttrs& a, const Tensor& x, const Tensor& out) {
  StridedView v;
  v.src = x.raw();
  v.rank = out.rank();
  for (int i = 0; i < v.rank; ++i) {
    v.shape[i] = out.shape()[i];
    v.strides[i] = x.strides()[a.perm[static_cast<size_t>(i)]];
  }
  return v;
}

// out[..., :] = table[ids[...], :]; false (the reference then reports the error) when an id is out of range.
bool gather(const Tensor& table, const Tensor& ids, const Tensor& out) {
  const int64_t n_rows = table.shape()[0];
  const int64_t dim = table.shape()[1];
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(ids.numel()));
  bool in_range = true;
  for_each_index(ids.shape(), [&](const int64_t* at) {
    const int64_t id = load_as_i64(ids.raw() + element_byte_offset(ids, at), ids.dtype());
    in_range = in_range && id >= 0 && id < n_rows;
    rows.push_back(id);
  });
  if (!in_range) return false;
  const size_t es = dtype_block_bytes(table.dtype());
  parallel_for(static_cast<int64_t>(rows.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      StridedView v;
      v.src = table.raw() + static_cast<size_t>(rows[static_cast<size_t>(r)] * table.strides()[0]) * es;
      v.rank = 1;
      v.shape[0] = dim;
      v.strides[0] = table.strides()[1];
      const StridedView c = coalesce(v);
      std::byte* dst = out.raw() + static_cast<size_t>(r * dim) * es;
      if (c.strides[0] == 1)
        std::memcpy(dst, c.src, static_cast<size_t>(dim) * es);
      else
        for (int64_t j = 0; j < dim; ++j)
          std::memcpy(dst + static_cast<size_t>(j) * es, c.src + static_cast<size_t>(j * c.strides[0]) * es, es);
    }
  });
  return true;
}

// Contiguous inputs concatenated along an axis: for each index before the axis, every input's block is one memcpy
// (a language model's cached keys and values followed by the new token's). Other inputs: false (the reference).
bool concat(const AxisAttrs& a, Inputs in, const Tensor& out, size_t es) {
  for (const Tensor& x : in)
    if (!x.is_contiguous() || x.dtype() != out.dtype()) return false;
  const int axis = out.shape().axis(a.axis);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= out.shape()[i];
  for (int i = axis + 1; i < out.rank(); ++i) inner *= out.shape()[i];
  const auto out_row = static_cast<size_t>(out.shape()[axis] * inner) * es;
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((size_t{64} << 10) / std::max<size_t>(out_row, 1)));
  parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      std::byte* dst = out.raw() + static_cast<size_t>(o) * out_row;
      for (const Tensor& x : in) {
        const auto bytes = static_cast<size_t>(x.shape()[axis] * inner) * es;
        std::memcpy(dst, x.raw() + static_cast<size_t>(o) * bytes, bytes);
        dst += bytes;
      }
    }
  });
  return true;
}

}  // namespace

bool try_layout(OpKind kind, const OpAttrs& attrs, Inputs in, const Tensor& out) {
  if (dtype_is_quantized(in[0].dtype()) || dtype_is_quantized(out.dtype()) || out.numel() == 0) return false;
  const size_t es = dtype_block_bytes(out.dtype());
  switch (kind) {
    case OpKind::Slice:
      copy_view(slice_view(std::get<SliceAttrs>(attrs), in[0], out), es, out.raw());
      return true;
    case OpKind::Permute:
      copy_view(permute_view(std::get<PermuteAttrs>(attrs), in[0], out), es, out.raw());
      return true;
    case OpKind::Gather:
      return gather(in[0], in[1], out);
    case OpKind::Concat:
      return concat(std::get<AxisAttrs>(attrs), in, out, es);
    default:
      return false;
  }
}

}  // namespace ltx::cpu::opt
