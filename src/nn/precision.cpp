#include "nn/precision.h"

namespace ltx::nn {

DType matmul_input_dtype(const Tensor& weight) { return weight.dtype() == DType::F32 ? DType::F32 : DType::BF16; }

Value to_matmul_input(Value x, const Linear& l) {
  const DType want = l.compute == DType::F32 ? DType::F32 : matmul_input_dtype(l.weight);  // validation: f32
  return x.dtype() == want ? x : ops::cast(x, want);
}

}  // namespace ltx::nn
