// The two convolution paths behind opt::try_conv (conv_opt.cpp), callable one by one so that tests check each
// against the reference whatever the selection rule picks.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

enum class ConvPath : uint8_t { Auto, OneDnn, Im2col };

// try_conv with the path forced (Auto: the measured rule); false where try_conv would decline.
bool conv_with_path(ConvPath path, OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out);

}  // namespace ltx::cpu::opt
