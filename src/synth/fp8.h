// The layout of the official fp8 checkpoints (ltx-2-19b-dev-fp8.safetensors, ltx-2.3-22b-dev-fp8.safetensors) as
// ltx-core reads them with its fp8 scaled-mm policy (ltx_core/quantization/fp8_scaled_mm.py, ltx-core 1.0.0):
//   - F8_E4M3: the weight of every nn.Linear inside `transformer_blocks.<i>.` of the DiT whose module path contains
//     none of EXCLUDED_LAYER_SUBSTRINGS (line 111): that list names the global layers (patchify_proj, the *adaln_single
//     families, caption projections, proj_out) and `transformer_blocks.0.` and `.43.` to `.47.`, so blocks 1-42 of
//     the 48 (`_apply_fp8_prepare_to_model`, line 145, swaps exactly those for FP8Linear; FP8_TRANSPOSE_SD_OPS only
//     looks under `transformer_blocks.`). Stored [out, in] like any Linear weight: the loader transposes 2-D F8 weights
//     to [in, out] for cuBLAS (FP8_TRANSPOSE_SD_OPS, lines 176-196), so the file keeps nn.Linear's order.
//   - beside each: `<layer>.weight_scale` and `<layer>.input_scale`, F32 scalars of shape [] (FP8Linear's
//     `nn.Parameter(torch.empty((), dtype=torch.float32))`, lines 31-33); W = W_f8 · weight_scale.
//   - everything else (biases, norms, tables, the global layers, blocks 0 and 43-47, the connectors, which ltx-core
//     builds outside LTXModel, the VAEs and vocoder) stays as in the bf16 file.
// Quantization follows quantize_weight_to_fp8_per_tensor (line 76): q = clamp(w · 448/max|w|, ±448) cast to e4m3fn,
// weight_scale = 1 / (448/max|w|). Assumptions (no published header was read): biases stay BF16, not F32 or F8;
// input_scale, a calibration the file carries for static activation quantization, is 1 here (ltx reads and ignores
// it, nn/layers.h); max|w| is the generator's bound for the tensor (ValueRule::max_abs) rather than the sample max,
// which is known before the single streaming pass and within 1e-4 of it (the smallest of these weights has 65,536
// elements). Checked against ltx-core: these are exactly the layers _apply_fp8_prepare_to_model makes FP8Linear
// (1428 in the 22B, 1176 in the 19B), with their parameters' names, dtypes and (transposed) shapes.
#pragma once

#include <string_view>

#include "synth/layout.h"
#include "synth/safetensors_stream.h"
#include "synth/values.h"

namespace ltx::synth {

inline constexpr float kF8E4M3Max = 448.0f;

// Whether a published tensor of an LTX single-file layout is stored F8_E4M3 in the fp8 checkpoint.
bool is_fp8_linear_weight(const TensorSpec& t);

// The fp8 checkpoint's layout from the bf16 one: those weights F8_E4M3, their scales added, sorted by name.
Layout fp8_layout(Layout bf16);

// The tensors of `layout` with their values from `values`: F8_E4M3 weights quantized with their per-tensor scale,
// `weight_scale` / `input_scale` beside them, everything else straight from the generator. In zeros mode every
// tensor is zeros except the scales, which are 1 (a zero scale would be a 0/0 in the reference quantizer).
// `values` must outlive the result.
std::vector<StreamedTensor> stand_in_tensors(const Layout& layout, const ValueGenerator& values);

}  // namespace ltx::synth
