// `ltx bench --vae-decode DIR {video|vocoder} [--reps N] [--memory-budget SIZE] [--backend NAME]`: our side of the
// issue-6 decode benchmark. DIR holds weights.safetensors and inputs.safetensors written by
// tools/reference/bench_vae_decode.py (the LTX-2.3 video decoder and BigVGAN-v2 + BWE vocoder at the published widths,
// seeded bf16 weights, a latent [1, 128, 3, 16, 24] and a 5 s mel [1, 2, 500, 64]). Loads the part in production
// precision (bf16), times N calls (no warm-up, as the PyTorch side) and prints `key=value` lines that
// bench/vae_decode.sh puts beside PyTorch's: time_s (median wall seconds per call), baseline_rss_kb (VmRSS before
// loading), loaded_rss_kb (VmRSS after loading the weights and the input), peak_rss_kb (VmHWM at the end),
// weights_bytes (the part's tensors in the file), plan_peak_bytes (video: the strategy's planned peak), strategy,
// budget_bytes (video with --memory-budget), threads.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "ltx/options.hpp"
#include "models/ltx/video_vae/video_vae_plan.h"
#include "models/ltx/vocoder/vocoder.h"
#include "nn/weight_loader.h"
#include "nn/weight_source.h"

namespace ltx::cli {
namespace {

long status_kb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
  fail("bench", "no " + key + " in /proc/self/status");
}

constexpr const char* kUsage =
    "usage: ltx bench --vae-decode DIR {video|vocoder} [--reps N] [--memory-budget SIZE] [--backend NAME]";

}  // namespace

int bench_vae_decode(Args args) {
  std::string dir, part;
  int reps = 1;
  std::optional<std::string> budget_text;
  const Backend* backend = &cpu_backend();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--reps" && i + 1 < args.size())
      reps = std::max(1, std::atoi(args[++i]));
    else if (a == "--memory-budget" && i + 1 < args.size())
      budget_text = args[++i];
    else if (a == "--backend" && i + 1 < args.size())
      backend = &backend_named(args[++i]);
    else if (dir.empty() && !a.starts_with("--"))
      dir = a;
    else if (part.empty() && (a == "video" || a == "vocoder"))
      part = a;
    else
      fail("bench", "unknown argument '" + std::string(a) + "'; " + kUsage);
  }
  LTX_CHECK(!dir.empty() && !part.empty(), "bench", kUsage, " (DIR from bench/vae_decode.sh)");
  LTX_CHECK(!budget_text || part == "video", "bench", "--memory-budget applies to the video decoder only");
  const long baseline_kb = status_kb("VmRSS");

  auto source = open_safetensors(dir + "/weights.safetensors");
  const auto it = source->metadata().find("config");
  LTX_CHECK(it != source->metadata().end(), "bench", source->describe(), ": no `config` metadata");
  const nlohmann::json cfg = nlohmann::json::parse(it->second);
  const std::string prefix = part == "video" ? "vae." : "vocoder.";
  size_t weights_bytes = 0;
  for (const std::string& name : source->names())
    if (name.starts_with(prefix) && !name.starts_with("vae.encoder.")) weights_bytes += source->get(name).nbytes();
  const SafetensorsFile in = SafetensorsFile::open(dir + "/inputs.safetensors");

  std::vector<double> times;
  size_t plan_peak = 0, budget = 0;
  long loaded_kb = 0;
  std::string strategy = "-";
  if (part == "video") {
    const auto dec = video_vae::VideoDecoder::load(WeightLoader(source, "vae."),
                                                   video_vae::VideoVaeConfig::from_metadata(cfg), DType::BF16);
    const Tensor latent = in.get("latent").contiguous();
    const video_vae::DecodeStrategy s =
        budget_text ? video_vae::plan_decode(*backend, dec, latent.shape(),
                                             budget = parse_size(*budget_text, "--memory-budget"))
                    : video_vae::price_strategy(*backend, dec, latent.shape(), latent.dim(0), latent.dim(2),
                                                latent.dim(3), latent.dim(4), 0);
    plan_peak = s.peak_bytes();
    strategy = s.describe();
    std::fprintf(stderr, "# strategy: %s\n", strategy.c_str());
    loaded_kb = status_kb("VmRSS");
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const Tensor video = video_vae::decode_video(*backend, dec, latent, s);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      std::fprintf(stderr, "# video call %d: %.3f s -> %s\n", r, times.back(), video.shape().str().c_str());
    }
  } else {
    const auto voc = vocoder::Vocoder::load(WeightLoader(source, "vocoder."), cfg, DType::BF16);
    const Tensor mel = in.get("mel").contiguous();
    loaded_kb = status_kb("VmRSS");
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const Tensor wave = voc.run(*backend, mel);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      std::fprintf(stderr, "# vocoder call %d: %.3f s -> %s\n", r, times.back(), wave.shape().str().c_str());
    }
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  std::printf("time_s=%.4f\n", n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]));
  std::printf("baseline_rss_kb=%ld\n", baseline_kb);
  std::printf("loaded_rss_kb=%ld\n", loaded_kb);
  std::printf("peak_rss_kb=%ld\n", status_kb("VmHWM"));
  std::printf("weights_bytes=%zu\n", weights_bytes);
  std::printf("plan_peak_bytes=%zu\n", plan_peak);
  std::printf("budget_bytes=%zu\n", budget);
  std::printf("strategy=%s\n", strategy.c_str());
  std::printf("threads=%d\n", thread_count());
  return 0;
}

}  // namespace ltx::cli
