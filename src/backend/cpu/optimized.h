// Optimized CPU kernels. Each returns false when it does not handle the call (dtype, layout, CPU features), and
// the dispatcher then runs the reference kernel; each is tested against that reference.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

bool try_matmul(const MatMulAttrs& a, Inputs in, const Tensor& out);  // matmul*.cpp

}  // namespace ltx::cpu::opt
