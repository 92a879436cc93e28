// The sampler's guard against silent numeric failure: a NaN or Inf in the latents (guidance scales far too large,
// corrupt weights) otherwise runs through every later step and the decoders and only surfaces at the AAC encoder.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/tensor.h"

namespace ltx {

// Elements of `t` that are NaN or +-Inf (any float dtype and layout).
int64_t non_finite_count(const Tensor& t);

// Throws ltx::Error(component, ...) naming `what`, where it was found and how many values, when `t` holds any.
void check_finite(const Tensor& t, std::string_view component, std::string_view what, std::string_view where);

}  // namespace ltx
