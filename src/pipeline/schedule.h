// Sigma schedules: LTX2Scheduler (token-count-dependent shift, stretched to a terminal value) and the fixed
// distilled schedules. Computed in f32 with torch's operation order, so the sigmas equal the reference's bit for bit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ltx {

struct Ltx2ScheduleParams {
  int steps = 30;
  int64_t tokens = 4096;  // latent frames x height x width; the reference's default when no latent is given
  double max_shift = 2.05;
  double base_shift = 0.95;
  bool stretch = true;
  double terminal = 0.1;
};

// steps + 1 sigmas from ~1 down to 0 (ltx_core/components/schedulers.py, LTX2Scheduler.execute).
std::vector<float> ltx2_sigmas(const Ltx2ScheduleParams& params);

// The distilled model's fixed schedules (ltx_pipelines/utils/constants.py): stage 1 (8 steps) and the stage-2
// refinement (3 steps).
std::span<const float> distilled_sigmas_stage1();
std::span<const float> distilled_sigmas_stage2();

}  // namespace ltx
