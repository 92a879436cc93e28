// MatMul shape inference: a [..., M, K] · b [..., K, N] (or their transposes), batch dims broadcast numpy-style.
#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {

TensorMeta matmul(const MatMulAttrs& attrs, Inputs in) {
  LTX_CHECK(in.size() == 2, "op", "matmul: expects 2 inputs (a, b), got ", in.size());
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  LTX_CHECK(a.rank() >= 2 && b.rank() >= 2, "op", "matmul: operands need rank >= 2, got a ", a.str(), " b ", b.str());
  LTX_CHECK(dtype_is_float(in[0].dtype), "op", "matmul: a must be f32, bf16 or f16, got ", dtype_name(in[0].dtype));
  LTX_CHECK(dtype_is_float(in[1].dtype) || dtype_is_quantized(in[1].dtype), "op",
            "matmul: b must be a float or quantized type, got ", dtype_name(in[1].dtype));

  const int64_t m = attrs.transpose_a ? a.dim(-1) : a.dim(-2);
  const int64_t ka = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  const int64_t kb = attrs.transpose_b ? b.dim(-1) : b.dim(-2);
  const int64_t n = attrs.transpose_b ? b.dim(-2) : b.dim(-1);
  LTX_CHECK(ka == kb, "op", "matmul: inner dimensions differ: a ", a.str(), (attrs.transpose_a ? "^T" : ""), " · b ",
            b.str(), (attrs.transpose_b ? "^T" : ""));

  if (dtype_is_quantized(in[1].dtype)) {
    // Quantized blocks run along a row, so only the Linear layout x·Wᵀ with W [N, K] has whole-block dot products.
    LTX_CHECK(b.rank() == 2 && attrs.transpose_b, "op", "matmul: quantized b (", dtype_name(in[1].dtype),
              ") must be 2-D [N, K] used with transpose_b, got ", b.str());
    const auto block = static_cast<int64_t>(dtype_block_elems(in[1].dtype));
    LTX_CHECK(kb % block == 0, "op", "matmul: K = ", kb, " is not a multiple of the ", dtype_name(in[1].dtype),
              " block size ", block);
  }

  Shape a_batch(std::span<const int64_t>(a.begin(), static_cast<size_t>(a.rank() - 2)));
  Shape b_batch(std::span<const int64_t>(b.begin(), static_cast<size_t>(b.rank() - 2)));
  Shape out;
  try {
    out = broadcast_shapes(a_batch, b_batch);
  } catch (const Error&) {
    fail("op", "matmul: batch dimensions of a " + a.str() + " and b " + b.str() + " do not broadcast");
  }
  out.push_back(m);
  out.push_back(n);
  return {in[0].dtype, out};
}

}  // namespace ltx::infer
