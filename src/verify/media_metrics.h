// What a person sees and hears, compared: PSNR and SSIM of two clips' frames, relative L2 and cosine similarity of
// two waveforms, and the gates a production run must pass against a validation run (issue 19's table, from another
// port's parity suite). Used by `ltx verify --gates` and `ltx compare-media`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace ltx {

// Frames [F, H, W, C], values in [0, 1] (peak 1). PSNR over every element (+inf when equal); SSIM per frame and
// channel with an 11x11 Gaussian window (sigma 1.5, smaller on frames under 11 pixels) over the valid region,
// C1 = 0.01², C2 = 0.03² (Wang et al. 2004), averaged over frames and channels.
struct FrameMetrics {
  double psnr_db = 0.0, ssim = 0.0;
};
FrameMetrics compare_frames(std::span<const float> a, std::span<const float> b, int64_t frames, int64_t height,
                            int64_t width, int64_t channels);

// Relative L2 of a against the reference b, ||a - b|| / ||b||, and cosine similarity; in double.
struct WaveformMetrics {
  double rel_l2 = 0.0, cosine = 0.0;
};
WaveformMetrics compare_waveforms(std::span<const float> a, std::span<const float> b);

// Production against validation: SSIM >= 0.99, PSNR >= 40 dB, audio relative L2 <= 0.10, cosine >= 0.99; a gate
// the official bf16 run itself misses against its float32 run becomes "no worse than the official bf16 run".
struct MediaGates {
  double min_psnr_db = 40.0, min_ssim = 0.99, max_rel_l2 = 0.10, min_cosine = 0.99;
  // The fixed gates, each relaxed to the official run's figure where that misses it.
  static MediaGates relaxed_to(const std::optional<FrameMetrics>& official_frames,
                               const std::optional<WaveformMetrics>& official_audio);
  bool pass(const FrameMetrics& m) const { return m.psnr_db >= min_psnr_db && m.ssim >= min_ssim; }
  bool pass(const WaveformMetrics& m) const { return m.rel_l2 <= max_rel_l2 && m.cosine >= min_cosine; }
};

std::string describe(const FrameMetrics& m);     // "PSNR 41.20 dB, SSIM 0.995213"
std::string describe(const WaveformMetrics& m);  // "rel L2 0.0312, cosine 0.99951234"

}  // namespace ltx
