// A direct convolution for small calls (conv_small_avx512.cpp): no JIT, no reorders, no im2col buffer, so its
// first call costs what every later call costs. opt::try_conv sends a call here when small_conv_applies (the
// measured cost rule); tests call run_small_conv directly on any shape it supports.
#pragma once

#include "backend/cpu/kernels.h"

namespace ltx::cpu::opt {

// True when run_small_conv can compute this Conv (1-3 spatial dims, any strides, dilation, groups and pad modes;
// x and w f32 or bf16 but not bf16 x with f32 w; out f32 or bf16) on this CPU (AVX-512 with BF16).
bool small_conv_supports(const ConvAttrs& a, Inputs in, const Tensor& out);

// The measured size rule, on the weights [O, C/G, *taps] alone: few enough that this kernel beats oneDNN's
// convolution on every call, the first included (rule and measurements at the top of conv_small_avx512.cpp).
bool small_conv_weights_fit(const Shape& w);

// True when the call is supported and its weights fit the size rule: the calls opt::try_conv sends here.
bool small_conv_applies(const ConvAttrs& a, Inputs in, const Tensor& out);

// The most run_small_conv allocates for itself on these shapes (the padded input, weights and bias in f32).
// The padded f32 input, which run_small_conv takes from the plan's scratch for its step when lent (kernel_scratch.h).
size_t small_conv_scratch_bytes(const ConvAttrs& a, const Shape& x);

// Everything a call allocates: the padded input, and the weights and bias packed in f32 (unless prepared).
size_t small_conv_workspace_bytes(const ConvAttrs& a, const Shape& x, const Shape& w, const Shape& out);

// out = conv(x, w) + bias, as ref::conv. Arithmetic: with bf16 weights, x is rounded to bf16 first (the production
// policy oneDNN's path follows: bf16 products, exact in f32) and sums are f32 in the reference's order (bias, then
// channels, then taps row-major), so the result equals ref::conv on the rounded x bit for bit; with f32 weights
// the products are fused multiply-adds, so the same sums differ from the reference by rounding only.
// `prepared` (may be null): the plan step's slot; the packed f32 weights and bias are kept there and reused while
// they were made from these very tensors. Precondition: small_conv_supports.
void run_small_conv(const ConvAttrs& a, Inputs in, const Tensor& out, PreparedSlot* prepared = nullptr);

}  // namespace ltx::cpu::opt
