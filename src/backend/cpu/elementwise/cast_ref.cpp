// Reference kernel for Cast. Float targets round once from f32 (round to nearest even for bf16/f16, as torch);
// integer-to-integer goes through i64 so large ids stay exact; float-to-integer truncates toward zero (C++ and
// torch agree for in-range values). Quantized sources decode row by row with dequantize_row.
#include <vector>

#include "backend/cpu/kernels.h"
#include "core/error.h"
#include "core/quant.h"

namespace ltx::cpu::ref {
namespace {

void cast_quantized(const Tensor& x, const Tensor& out) {
  const int64_t row = x.shape().dim(-1);
  const size_t es = dtype_block_bytes(out.dtype());
  Shape rows = x.shape();
  rows[x.rank() - 1] = 1;
  std::vector<float> values(static_cast<size_t>(row));
  int64_t pos = 0;
  for_each_index(rows, [&](const int64_t* idx) {
    int64_t elem = 0;  // element offset of the row start; a whole number of blocks (Tensor checks quantized views)
    for (int i = 0; i < x.rank() - 1; ++i) elem += idx[i] * x.strides()[i];
    const size_t bytes = static_cast<size_t>(elem) / dtype_block_elems(x.dtype()) * dtype_block_bytes(x.dtype());
    dequantize_row(x.dtype(), x.raw() + bytes, values.data(), row);
    for (float v : values) store_from_f32(out.raw() + static_cast<size_t>(pos++) * es, out.dtype(), v);
  });
}

}  // namespace

void cast(const CastAttrs& a, Inputs in, const Tensor& out) {
  const Tensor& x = in[0];
  if (x.numel() == 0) return;
  if (dtype_is_quantized(x.dtype())) return cast_quantized(x, out);
  const bool ints = !dtype_is_float(x.dtype()) && !dtype_is_float(a.to);
  const size_t es = dtype_block_bytes(out.dtype());
  int64_t pos = 0;
  for_each_index(x.shape(), [&](const int64_t* idx) {
    const std::byte* src = x.raw() + element_byte_offset(x, idx);
    std::byte* dst = out.raw() + static_cast<size_t>(pos++) * es;
    if (ints)
      store_from_i64(dst, a.to, load_as_i64(src, x.dtype()));
    else
      store_from_f32(dst, a.to, load_as_f32(src, x.dtype()));
  });
}

}  // namespace ltx::cpu::ref
