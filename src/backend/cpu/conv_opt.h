// The two convolution paths behind opt::try_conv (conv_opt.cpp), callable one by one so that tests check each
// against the reference whatever the selection rule picks.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

enum class ConvPath : uint8_t { Auto, OneDnn, Im2col };

// try_conv with the path forced (Auto: the measured rule, and the depthwise 1-D kernel where it applies); false
// where try_conv would decline. `prepared`: as in try_conv.
bool conv_with_path(ConvPath path, OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out,
                    PreparedSlot* prepared = nullptr);

}  // namespace ltx::cpu::opt
