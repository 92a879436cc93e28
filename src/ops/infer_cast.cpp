// Shape/dtype inference for Cast: any plain dtype to any plain dtype; quantized sources decode to a float type.
#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {

TensorMeta cast(const CastAttrs& a, Inputs in) {
  LTX_CHECK(in.size() == 1, "op", "cast: expects 1 input, got ", in.size());
  const TensorMeta& x = in[0];
  // Quantizing is a weight-preparation step (quantize_row), not a graph op.
  LTX_CHECK(!dtype_is_quantized(a.to), "op", "cast: cannot cast ", dtype_name(x.dtype), x.shape.str(), " to quantized ",
            dtype_name(a.to));
  LTX_CHECK(!dtype_is_quantized(x.dtype) || dtype_is_float(a.to), "op", "cast: quantized ", dtype_name(x.dtype),
            x.shape.str(), " decodes only to a float dtype, not ", dtype_name(a.to));
  return {a.to, x.shape};
}

}  // namespace ltx::infer
