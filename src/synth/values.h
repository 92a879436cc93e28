// Deterministic stand-in weight values. Counter-based: element i of a tensor is a hash of (seed, the FNV-1a hash of
// the tensor's name, i) (splitmix64), so any range of any tensor is computed on its own, by any thread, in any order.
//
// value = center + half_width · u, u uniform in [-1, 1) (24 bits), with the rule picked by name and shape so that
// activations stay finite and non-trivial through the 48 DiT layers, the VAEs, the vocoder and Gemma:
//   - rank >= 2 `*.weight` (Linear [out, in], conv [out, in/groups, k...], embedding tables [vocab, hidden]):
//     variance 1/fan_in, fan_in = product of all dims but the first (Gemma scales embeddings by sqrt(hidden));
//     LoRA `lora_B` gets variance 0.01/rank, so B·A is a tenth of the weight it adds to;
//     Gemma's `mm_input_projection_weight` [vision, text] (used as x·W) variance 1/shape[0];
//   - 1-D norm weights (`*norm*.weight`): 1 ± 0.02, except Gemma's RMSNorms (language_model., multi_modal_projector.),
//     which HF stores zero-centred (the layer scales by 1 + w): ±0.02;
//   - `*scale_shift_table*`: ±0.1; `per_channel_statistics` means ±0.1, standard deviations 1 + 0.1·|u| (> 0);
//   - `*.bias` and everything else (registers, filters, STFT bases, snake alpha/beta in log scale): ±0.02.
// Zeros mode: every value is 0.
#pragma once

#include <cstdint>

#include "synth/layout.h"

namespace ltx::synth {

// value = center + half_width · (absolute ? |u| : u).
struct ValueRule {
  float center = 0.0f;
  float half_width = 0.02f;
  bool absolute = false;
  float max_abs() const { return (center < 0 ? -center : center) + half_width; }  // the largest |value|
};

// The rule for one tensor (independent of the seed).
ValueRule value_rule(const TensorSpec& t);

class ValueGenerator {
 public:
  ValueGenerator(uint64_t seed, bool zeros);
  // Elements [first, first + count) of the tensor in row-major order, as f32 (before any rounding to its dtype).
  void fill(const TensorSpec& t, int64_t first, int64_t count, float* out) const;
  bool zeros() const { return zeros_; }
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  bool zeros_;
};

}  // namespace ltx::synth
