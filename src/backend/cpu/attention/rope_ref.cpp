// Reference rotary position embedding, the two layouts of ltx_core/model/transformer/rope.py:
//   Interleaved (apply_interleaved_rotary_emb): pairs (2i, 2i+1); out = x·cos + rot(x)·sin with
//     rot(x)[2i] = -x[2i+1], rot(x)[2i+1] = x[2i]; cos/sin broadcast to x.
//   SplitHalf (apply_split_rotary_emb): halves x1 = x[..., :D/2], x2 = x[..., D/2:];
//     out1 = x1·cos - x2·sin, out2 = x2·cos + x1·sin; cos/sin broadcast to x[..., :D/2].
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

namespace ltx::cpu::ref {
namespace {

// Byte offset of row `row` (flattened leading dims of `shape`, the last dim excluded) in a view with `strides`.
int64_t row_offset(int64_t row, const Shape& shape, const Shape& strides, size_t elem_bytes) {
  int64_t off = 0;
  for (int i = shape.rank() - 2; i >= 0; --i) {
    off += (row % shape[i]) * strides[i];
    row /= shape[i];
  }
  return off * static_cast<int64_t>(elem_bytes);
}

// Converts `n` elements along t's last dimension, starting at p, to f32.
void load_row(const Tensor& t, const std::byte* p, int64_t n, float* dst) {
  const int64_t step = t.strides()[t.rank() - 1] * static_cast<int64_t>(dtype_block_bytes(t.dtype()));
  for (int64_t i = 0; i < n; ++i) dst[i] = load_as_f32(p + i * step, t.dtype());
}

}  // namespace

void rope(const RopeAttrs& attrs, Inputs in, const Tensor& out) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::rope(attrs, metas);
  LTX_CHECK(out.dtype() == expect.dtype && out.shape() == expect.shape && out.is_contiguous(), "cpu", "rope: output ",
            out.describe(), " must be a contiguous ", dtype_name(expect.dtype), expect.shape.str());
  const Tensor& x = in[0];
  const Shape& shape = x.shape();  // [..., T, D]
  const int64_t dim = shape.dim(-1);
  const bool split = attrs.mode == RopeMode::SplitHalf;
  Shape table = shape;  // what cos/sin broadcast to: [..., T, D] or [..., T, D/2]
  if (split) table[shape.rank() - 1] = dim / 2;
  const Tensor cos = in[1].broadcast_to(table);
  const Tensor sin = in[2].broadcast_to(table);
  const int64_t n_table = table.dim(-1);
  const int64_t rows = shape.numel() / dim;
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));

  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> xr(static_cast<size_t>(dim)), c(static_cast<size_t>(n_table)), s(c.size());
    std::vector<float> o(xr.size());
    for (int64_t r = begin; r < end; ++r) {
      load_row(x, x.raw() + row_offset(r, shape, x.strides(), dtype_block_bytes(x.dtype())), dim, xr.data());
      load_row(cos, cos.raw() + row_offset(r, table, cos.strides(), dtype_block_bytes(cos.dtype())), n_table, c.data());
      load_row(sin, sin.raw() + row_offset(r, table, sin.strides(), dtype_block_bytes(sin.dtype())), n_table, s.data());
      if (split) {
        const auto half = static_cast<size_t>(dim / 2);
        for (size_t i = 0; i < half; ++i) {
          o[i] = xr[i] * c[i] - xr[i + half] * s[i];
          o[i + half] = xr[i + half] * c[i] + xr[i] * s[i];
        }
      } else {
        for (size_t i = 0; i < xr.size(); i += 2) {
          o[i] = xr[i] * c[i] - xr[i + 1] * s[i];
          o[i + 1] = xr[i + 1] * c[i + 1] + xr[i] * s[i + 1];
        }
      }
      std::byte* dst = out.raw() + r * dim * oes;
      for (int64_t i = 0; i < dim; ++i) store_from_f32(dst + i * oes, out.dtype(), o[static_cast<size_t>(i)]);
    }
  });
}

}  // namespace ltx::cpu::ref
