// Reference MatMul: out[..., m, n] = Σ_k a[..., m, k]·b[..., k, n] with f32 accumulation, one rounding at the
// store. Batch dims broadcast numpy-style (a 2-D b is shared by every batch: the Linear case x·Wᵀ). With an
// epilogue (kernels.h) the f32 sums go to it instead of being rounded into out: the oracle of the fused kernels.
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/error.h"
#include "core/quant.h"
#include "core/thread_pool.h"
#include "ops/infer.h"

namespace ltx::cpu::ref {
namespace {

// Element offset of the batch part of `t` (rank r, batch dims r-2) at the broadcast batch index `out_index`.
int64_t batch_offset(const Tensor& t, const int64_t* out_index, int out_batch_rank) {
  const int t_batch_rank = t.rank() - 2;
  int64_t off = 0;
  for (int i = 0; i < t_batch_rank; ++i)
    if (t.shape()[i] != 1) off += out_index[out_batch_rank - t_batch_rank + i] * t.strides()[i];
  return off;
}

void unravel(int64_t flat, const Shape& shape, int64_t* index) {
  for (int i = shape.rank() - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
}

struct Geometry {
  int64_t m, n, k;
  int64_t a_sm, a_sk;  // element strides of a along m and k (after the transpose)
  int64_t b_sk, b_sn;
  Shape batch;  // out's batch dims
};

Geometry geometry_of(const MatMulAttrs& attrs, const Tensor& a, const Tensor& b, const Tensor& out) {
  Geometry g;
  g.m = out.dim(-2);
  g.n = out.dim(-1);
  g.k = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  const int ra = a.rank(), rb = b.rank();
  g.a_sm = attrs.transpose_a ? a.strides()[ra - 1] : a.strides()[ra - 2];
  g.a_sk = attrs.transpose_a ? a.strides()[ra - 2] : a.strides()[ra - 1];
  g.b_sk = attrs.transpose_b ? b.strides()[rb - 1] : b.strides()[rb - 2];
  g.b_sn = attrs.transpose_b ? b.strides()[rb - 2] : b.strides()[rb - 1];
  g.batch = Shape(std::span<const int64_t>(out.shape().begin(), static_cast<size_t>(out.rank() - 2)));
  return g;
}

// The row of a that output row r (flattened batch·M) reads, converted to f32 into `row` [K].
void load_a_row(const Tensor& a, const Geometry& g, int64_t r, float* row) {
  int64_t index[kMaxRank] = {};
  unravel(r / g.m, g.batch, index);
  const size_t es = dtype_block_bytes(a.dtype());
  const std::byte* base =
      a.raw() + (batch_offset(a, index, g.batch.rank()) + (r % g.m) * g.a_sm) * static_cast<int64_t>(es);
  for (int64_t k = 0; k < g.k; ++k) row[k] = load_as_f32(base + k * g.a_sk * static_cast<int64_t>(es), a.dtype());
}

void matmul_plain(const Tensor& a, const Tensor& b, const Geometry& g, const Tensor& out,
                  const MatMulEpilogue* epilogue) {
  const int64_t rows = g.batch.numel() * g.m;
  const auto bes = static_cast<int64_t>(dtype_block_bytes(b.dtype()));
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> a_row(static_cast<size_t>(g.k));                // [K]
    std::vector<float> sums(epilogue ? static_cast<size_t>(g.n) : 0);  // [N]: the row's results for the epilogue
    int64_t index[kMaxRank] = {};
    for (int64_t r = begin; r < end; ++r) {
      load_a_row(a, g, r, a_row.data());
      unravel(r / g.m, g.batch, index);
      const std::byte* b_base = b.raw() + batch_offset(b, index, g.batch.rank()) * bes;
      std::byte* o = out.raw() + r * g.n * oes;
      for (int64_t n = 0; n < g.n; ++n) {
        float acc = 0.0f;
        for (int64_t k = 0; k < g.k; ++k)
          acc += a_row[static_cast<size_t>(k)] * load_as_f32(b_base + (k * g.b_sk + n * g.b_sn) * bes, b.dtype());
        if (epilogue)
          sums[static_cast<size_t>(n)] = acc;
        else
          store_from_f32(o + n * oes, out.dtype(), acc);
      }
      if (epilogue) epilogue->store(r, 0, g.n, sums.data());
    }
  });
}

// Quantized b is [N, K] used transposed: each weight row n is dequantized once (O(K) scratch per thread) and
// dotted with every row of a; threads own disjoint output columns.
void matmul_quantized(const Tensor& a, const Tensor& b, const Geometry& g, const Tensor& out,
                      const MatMulEpilogue* epilogue) {
  const int64_t rows = g.batch.numel() * g.m;
  const auto block = static_cast<int64_t>(dtype_block_elems(b.dtype()));
  const auto row_bytes = b.strides()[0] / block * static_cast<int64_t>(dtype_block_bytes(b.dtype()));
  const auto oes = static_cast<int64_t>(dtype_block_bytes(out.dtype()));
  parallel_for(g.n, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> b_row(static_cast<size_t>(g.k));  // [K]
    std::vector<float> a_row(static_cast<size_t>(g.k));  // [K]
    for (int64_t n = begin; n < end; ++n) {
      dequantize_row(b.dtype(), b.raw() + n * row_bytes, b_row.data(), g.k);
      for (int64_t r = 0; r < rows; ++r) {
        load_a_row(a, g, r, a_row.data());
        float acc = 0.0f;
        for (int64_t k = 0; k < g.k; ++k) acc += a_row[static_cast<size_t>(k)] * b_row[static_cast<size_t>(k)];
        if (epilogue)
          epilogue->store(r, n, 1, &acc);
        else
          store_from_f32(out.raw() + (r * g.n + n) * oes, out.dtype(), acc);
      }
    }
  });
}

}  // namespace

void matmul(const MatMulAttrs& attrs, Inputs in, const Tensor& out) { matmul(attrs, in, out, nullptr); }

void matmul(const MatMulAttrs& attrs, Inputs in, const Tensor& out, const MatMulEpilogue* epilogue) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta expect = infer::matmul(attrs, metas);
  LTX_CHECK((epilogue || out.dtype() == expect.dtype) && out.shape() == expect.shape && out.is_contiguous(), "cpu",
            "matmul: output ", out.describe(), " must be a contiguous ", dtype_name(expect.dtype), expect.shape.str());
  const Geometry g = geometry_of(attrs, in[0], in[1], out);
  if (dtype_is_quantized(in[1].dtype()))
    matmul_quantized(in[0], in[1], g, out, epilogue);
  else
    matmul_plain(in[0], in[1], g, out, epilogue);
}

}  // namespace ltx::cpu::ref
