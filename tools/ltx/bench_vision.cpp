// `ltx bench --vision PATH [--reps N] [--precision validation|production]`: our side of bench/vision.sh. Gemma 3's
// vision tower and projector (a Hugging Face folder with one, or an mmproj .gguf) seeing one image (a fixed
// gradient, prepared as enhance_i2v prepares it): seconds per image (median of the repetitions after a warm-up) and
// the image's features, as key=value lines. bench/vision.sh prints them beside transformers' on the same sizes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "models/gemma3/image_preprocess.h"
#include "models/gemma3/vision.h"
#include "option_values.h"

namespace ltx::cli {

int bench_vision(Args args) {
  if (args.empty()) fail("bench", "--vision needs a Gemma 3 folder or an mmproj .gguf");
  const std::string path = args[0];
  int64_t reps = 3;
  DType compute = DType::BF16;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string a = args[i];
    if (i + 1 >= args.size()) fail("bench", a + " needs a value");
    const std::string v = args[++i];
    if (a == "--reps")
      reps = whole_number("bench", a, v, 1, 100);
    else if (a == "--precision" && (v == "validation" || v == "production"))
      compute = v == "validation" ? DType::F32 : DType::BF16;
    else
      fail("bench", "unknown option " + a);
  }
  gemma3::VisionTower tower = gemma3::VisionTower::load(path, compute, cpu_backend());
  const gemma3::VisionConfig& c = tower.config();
  io::RgbImage image{720, 1280, std::vector<uint8_t>(720 * 1280 * 3)};
  for (size_t i = 0; i < image.rgb.size(); ++i) image.rgb[i] = static_cast<uint8_t>((i * 7) % 251);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const Tensor pixels = gemma3::enhance_image_pixels(image, 896, c.image_size);
  const double preprocess = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> seconds;
  for (int64_t r = 0; r <= reps; ++r) {  // the first run warms up (plan compiled, pages faulted in)
    const auto t = Clock::now();
    const gemma3::VisionOutput out = tower.run(pixels);
    if (r > 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - t).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("%s\npatches=%lld\ntokens=%lld\npreprocess_seconds=%.3f\nseconds_per_image=%.3f\n", c.describe().c_str(),
              static_cast<long long>(c.patches()), static_cast<long long>(c.mm_tokens_per_image), preprocess,
              seconds[seconds.size() / 2]);
  return 0;
}

}  // namespace ltx::cli
