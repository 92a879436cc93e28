#include "pipeline/params.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace ltx {

PipelineDefaults pipeline_defaults(const std::string& model_version, int64_t n_layers) {
  const bool v23 = model_version.rfind("2.3", 0) == 0;  // constants.py _LTX_2_3_MODEL_VERSION_PREFIX
  PipelineDefaults d;
  d.steps = v23 ? 30 : 40;
  const int64_t block = std::min<int64_t>(v23 ? 28 : 29, std::max<int64_t>(n_layers - 1, 0));
  d.guidance.video = GuiderParams{3.0f, 1.0f, {block}, 0.7f, 3.0f, 0};
  d.guidance.audio = GuiderParams{7.0f, 1.0f, {block}, 0.7f, 3.0f, 0};
  return d;
}

PipelineDefaults hq_pipeline_defaults() {
  PipelineDefaults d;
  d.steps = 15;
  d.guidance.video = GuiderParams{3.0f, 0.0f, {}, 0.45f, 3.0f, 0};
  d.guidance.audio = GuiderParams{7.0f, 0.0f, {}, 1.0f, 3.0f, 0};
  return d;
}

const std::string& default_negative_prompt() {
  static const std::string prompt =
      "blurry, out of focus, overexposed, underexposed, low contrast, washed out colors, excessive noise, "
      "grainy texture, poor lighting, flickering, motion blur, distorted proportions, unnatural skin tones, "
      "deformed facial features, asymmetrical face, missing facial features, extra limbs, disfigured hands, "
      "wrong hand count, artifacts around text, inconsistent perspective, camera shake, incorrect depth of "
      "field, background too sharp, background clutter, distracting reflections, harsh shadows, inconsistent "
      "lighting direction, color banding, cartoonish rendering, 3D CGI look, unrealistic materials, uncanny "
      "valley effect, incorrect ethnicity, wrong gender, exaggerated expressions, wrong gaze direction, "
      "mismatched lip sync, silent or muted audio, distorted voice, robotic voice, echo, background noise, "
      "off-sync audio, incorrect dialogue, added dialogue, repetitive speech, jittery movement, awkward "
      "pauses, incorrect timing, unnatural transitions, inconsistent framing, tilted camera, flat lighting, "
      "inconsistent tone, cinematic oversaturation, stylized filters, or AI artifacts.";
  return prompt;
}

namespace {

// The valid values nearest to v on the grid start + k·step (k >= 0): one or two candidates.
std::string nearest(int64_t v, int64_t start, int64_t step) {
  const int64_t k = std::max<int64_t>((v - start) / step, 0);
  const int64_t lo = start + k * step, hi = lo + step;
  if (v < start) return std::to_string(start);
  return std::to_string(lo) + " or " + std::to_string(hi);
}

}  // namespace

void check_generation_request(int64_t frames, int64_t height, int64_t width, double fps, bool two_stage) {
  std::vector<std::string> problems;
  if (frames < 1 || (frames - 1) % 8 != 0)
    problems.push_back("frames " + std::to_string(frames) + " is not 8k+1 (nearest: " + nearest(frames, 1, 8) + ")");
  const int64_t m = two_stage ? 64 : 32;
  const std::string why = two_stage ? " (two stages)" : "";
  for (auto [name, v] : {std::pair<const char*, int64_t>{"height", height}, {"width", width}}) {
    if (v < m || v % m != 0)
      problems.push_back(std::string(name) + " " + std::to_string(v) + " is not a multiple of " + std::to_string(m) +
                         why + " (nearest: " + nearest(v, m, m) + ")");
  }
  if (!(fps > 0)) problems.push_back("fps must be positive");
  if (problems.empty()) return;
  std::ostringstream os;
  for (size_t i = 0; i < problems.size(); ++i) os << (i ? "; " : "") << problems[i];
  fail("generate", os.str());
}

}  // namespace ltx
