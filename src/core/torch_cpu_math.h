// torch's CPU float arithmetic where it is not the textbook formula: the few element-wise results the engine must
// reproduce bit for bit because a model amplifies their last bit (RoPE frequency grids: a 1-ulp change of a grid
// value moves high-frequency angles by up to ~2e-3 rad at the largest positions).
//
// torch picks one kernel set per process (aten's CPU capability: AVX-512, AVX2 or the portable "default"; the
// ATEN_CPU_CAPABILITY environment variable overrides it). Measured on torch 2.15 against the rules below (linspace:
// every size 1..1100 and some up to 50,000; pow: sizes 32..1100; tools/reference/make_rope_goldens.py keeps cases
// that expose them):
// - linspace(start, end, n), f32: step = (end - start) / (n - 1) in f32; element i < n/2 is start + step·i, the others
//   end - step·(n-1-i). AVX2/AVX-512 builds contract both into one fused multiply-add (as CUDA's kernel does);
//   the default build rounds the product first.
// - pow(scalar base, tensor), f32: the vector loop covers the first floor(n / 2V)·2V elements (V = 16 lanes on
//   AVX-512, 8 on AVX2) with SLEEF's 1-ulp powf (Sleef_powf16_u10 / Sleef_powf8_u10, bit-identical to
//   Sleef_powf1_u10purecfma, which the engine calls); the rest, and every element in the default build, with the C
//   library's powf. One loop up to aten's grain of 32,768 elements (larger tensors are split across threads, each
//   part with its own tail: not reproduced; the grids the engine builds hold at most a few thousand).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ltx {

enum class TorchCpuKernels { Default, Avx2, Avx512 };

std::string_view torch_cpu_kernels_name(TorchCpuKernels k);  // "default", "avx2", "avx512" (ATEN_CPU_CAPABILITY's)
std::optional<TorchCpuKernels> parse_torch_cpu_kernels(std::string_view name);  // case-insensitive

// The kernel set torch would pick in this process: an override set below, else ATEN_CPU_CAPABILITY when it names
// one, else AVX-512 (F, BW, VL, DQ and FMA), AVX2 (with FMA), or default, as aten chooses. Any set is reproduced
// on any CPU with FMA (the AVX-512 results need no AVX-512).
TorchCpuKernels torch_cpu_kernels();
// Overrides the choice (a golden case replays with the set that made it); nullopt restores the detected one. Fails
// when this CPU lacks the fused multiply-add the AVX2/AVX-512 results need.
void set_torch_cpu_kernels(std::optional<TorchCpuKernels> k);

std::vector<float> torch_linspace(float start, float end, int64_t n, TorchCpuKernels k);
// base ** exponents[i] (torch.pow(Scalar, Tensor)) over one contiguous f32 tensor.
std::vector<float> torch_pow(float base, std::span<const float> exponents, TorchCpuKernels k);

}  // namespace ltx
