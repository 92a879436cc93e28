// Multi-modal guidance on x0 (ltx_core/components/guiders.py: MultiModalGuiderParams, MultiModalGuider): CFG
// against the negative prompt, STG against a pass with self-attention skipped in chosen blocks, modality guidance
// against a pass with the A<->V cross-attention skipped everywhere, then an optional std rescale. f32 throughout.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace ltx {

struct GuiderParams {
  float cfg_scale = 1.0f;
  float stg_scale = 0.0f;
  std::vector<int64_t> stg_blocks;
  float rescale_scale = 0.0f;
  float modality_scale = 1.0f;
  int skip_step = 0;

  // guiders.py do_unconditional_generation / do_perturbed_generation / do_isolated_modality_generation
  // (math.isclose with its default rel_tol 1e-9).
  bool needs_uncond() const;
  bool needs_perturbed() const;
  bool needs_isolated() const;
  // guiders.py should_skip_step: skip_step = k reuses the previous x0 when step % (k+1) != 0.
  bool skip(int step) const { return skip_step != 0 && step % (skip_step + 1) != 0; }
};

// The x0 of each DiT pass for one stream ([B, T, C] f32); a pass that did not run is an empty tensor and its
// scale must leave it unused.
struct GuidancePasses {
  Tensor cond, uncond, perturbed, isolated;
};

// pred = c + (cfg-1)(c-u) + stg(c-p) + (mod-1)(c-m); with rescale r != 0, pred *= r·std(c)/std(pred) + (1-r),
// std over the whole tensor (unbiased), as guiders.py MultiModalGuider.calculate.
Tensor guide(const GuiderParams& params, const GuidancePasses& passes);

}  // namespace ltx
