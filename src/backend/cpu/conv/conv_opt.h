// The two convolution paths behind opt::try_conv (conv_opt.cpp), callable one by one so that tests check each
// against the reference whatever the selection rule picks.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// OneDnn: channels-last slabs (groups 1), else the whole tensors in oneDNN's blocked layouts; OneDnnWhole: the
// latter always.
enum class ConvPath : uint8_t { Auto, OneDnn, OneDnnWhole, Im2col };

// try_conv with the path forced (Auto: the measured rule, and the depthwise 1-D kernel where it applies); false
// where try_conv would decline. `prepared`: as in try_conv.
bool conv_with_path(ConvPath path, OpKind kind, const ConvAttrs& a, Inputs in, const Tensor& out,
                    PreparedSlot* prepared = nullptr);

// The most memory a Conv call with these operands allocates for itself beyond its input and output (slabs, one
// chunk of converted weights, bias, oneDNN's scratchpad), for planners that must bound a step's peak.
size_t conv_workspace_bytes(const ConvAttrs& a, const TensorMeta& x, const TensorMeta& w, const TensorMeta& out);

// The scratch a Conv step takes from its plan (kernel_scratch.h) on the path try_conv picks for these operands: the
// channels-last slabs, a chunk of converted weights and the primitive's scratchpad; the small kernel's padded
// input; 0 on paths that keep their own buffers (the 1-D bf16 kernel's rows per thread, depthwise rows, whole
// tensors with groups > 1).
size_t conv_scratch_bytes(OpKind kind, const ConvAttrs& a, std::span<const TensorMeta> in, const TensorMeta& out);

// The channels-last path's sizes: input + output slab, and one chunk of converted weights (default 24 MiB each).
// Tests set small ones to run many slabs and chunks on small tensors.
void set_conv_slab_limits(size_t slab_bytes, size_t weight_chunk_bytes);

// What the latest channels-last Conv call (any thread) allocated for itself: tests compare it with the bound.
size_t last_conv_workspace_bytes();
// The largest since reset_conv_workspace_peak() (or the start).
size_t conv_workspace_peak_bytes();
void reset_conv_workspace_peak();

}  // namespace ltx::cpu::opt
