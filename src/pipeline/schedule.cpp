#include "pipeline/schedule.h"

#include <cmath>

#include "core/error.h"
#include "core/torch_cpu_math.h"

namespace ltx {

std::vector<float> ltx2_sigmas(const Ltx2ScheduleParams& p) {
  LTX_CHECK(p.steps >= 1, "schedule", "steps must be at least 1, got ", p.steps);
  LTX_CHECK(p.tokens >= 1, "schedule", "token count must be positive, got ", p.tokens);
  LTX_CHECK(!p.stretch || p.terminal < 1.0, "schedule", "terminal must be below 1, got ", p.terminal);
  // The shift is linear in the token count between anchors 1024 and 4096 (schedulers.py BASE/MAX_SHIFT_ANCHOR),
  // computed in Python doubles.
  const double mm = (p.max_shift - p.base_shift) / (4096.0 - 1024.0);
  const double b = p.base_shift - mm * 1024.0;
  const double shift = static_cast<double>(p.tokens) * mm + b;
  // exp(shift) enters the f32 tensor maths as a wrapped scalar, rounded to f32. `a / t` for a scalar a is
  // t.reciprocal() * a in torch (torch/_tensor.py __rdiv__), hence the two-step form below.
  const auto e = static_cast<float>(std::exp(shift));
  std::vector<float> s = torch_linspace(1.0f, 0.0f, p.steps + 1, torch_cpu_kernels());  // as torch rounds it
  for (float& x : s) {
    if (x == 0.0f) continue;
    const float inv = 1.0f / x;
    const float denom = e + (inv - 1.0f);
    x = (1.0f / denom) * e;
  }
  if (p.stretch) {
    // Scale 1 - sigma so the last non-zero sigma lands on `terminal` (schedulers.py, the stretch block).
    float last = 0.0f;
    for (float x : s)
      if (x != 0.0f) last = 1.0f - x;
    const float scale_factor = last / static_cast<float>(1.0 - p.terminal);
    for (float& x : s)
      if (x != 0.0f) x = 1.0f - (1.0f - x) / scale_factor;
  }
  return s;
}

std::span<const float> distilled_sigmas_stage1() {
  static const float sigmas[] = {1.0f, 0.99375f, 0.9875f, 0.98125f, 0.975f, 0.909375f, 0.725f, 0.421875f, 0.0f};
  return sigmas;
}

std::span<const float> distilled_sigmas_stage2() {
  static const float sigmas[] = {0.909375f, 0.725f, 0.421875f, 0.0f};
  return sigmas;
}

}  // namespace ltx
