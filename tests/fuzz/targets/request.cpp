// A generation request as a program or `ltx generate` builds it (ltx/request.hpp): every numeric field from the
// input, NaN, infinities and extremes included, through check_request, which must refuse what is out of range by
// name and pass only what the engine can run (checked here for the fields the issue names).
#include "ltx/request.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "fuzz_target.h"
#include "ltx/error.hpp"

namespace {

// Reads values off the input in order; zeros once it is used up.
struct Reader {
  const uint8_t* data;
  size_t size;
  template <typename T>
  T next() {
    T v{};
    const size_t n = std::min(sizeof(T), size);
    if (n > 0) std::memcpy(&v, data, n);
    data += n;
    size -= n;
    return v;
  }
  double number() {
    switch (next<uint8_t>() % 6) {  // extremes are more likely than random bits
      case 0:
        return std::numeric_limits<double>::quiet_NaN();
      case 1:
        return (next<uint8_t>() & 1) ? std::numeric_limits<double>::infinity()
                                     : -std::numeric_limits<double>::infinity();
      case 2:
        return static_cast<double>(next<int8_t>());
      default:
        return next<double>();
    }
  }
};

}  // namespace

LTX_FUZZ_TARGET(request) {
  Reader in{data, size};
  ltx::GenerateRequest r;
  r.prompts = {"a fox"};
  r.width = in.next<int64_t>() % 4096;
  r.height = in.next<int64_t>() % 4096;
  r.frames = in.next<int64_t>() % 1024;
  r.fps = in.number();
  r.steps = in.next<int16_t>();
  r.seed = in.next<uint64_t>();
  r.batch = in.next<int8_t>();
  r.video_guidance.cfg = static_cast<float>(in.number());
  r.video_guidance.stg = static_cast<float>(in.number());
  r.video_guidance.rescale = static_cast<float>(in.number());
  r.audio_guidance.cfg = static_cast<float>(in.number());
  r.audio_guidance.modality = static_cast<float>(in.number());
  r.enhance_max_new_tokens = in.next<int32_t>();
  r.conditioning_strength = in.number();
  if (in.next<uint8_t>() & 1)
    r.images.push_back({"/nonexistent.png", in.next<int64_t>() % 300, in.number(), in.next<int8_t>()});
  try {
    ltx::check_request(r);
  } catch (const ltx::Error&) {
    return 0;
  }
  // Passed: then what the issue names is in range.
  const auto finite = [](const std::optional<float>& v) { return !v || std::isfinite(*v); };
  if (r.steps < 0 || r.batch < 1 || r.frames % 8 != 1 || r.width <= 0 || r.height <= 0 ||
      !(std::isfinite(r.fps) && r.fps > 0) || !finite(r.video_guidance.cfg) || !finite(r.video_guidance.stg) ||
      !finite(r.audio_guidance.cfg) || r.enhance_max_new_tokens < 1 || !r.images.empty())  // the image is absent
    std::abort();
  return 0;
}
