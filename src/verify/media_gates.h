// `ltx verify --gates`: a golden case's decoded media (outputs video.decoded [B,3,F,H,W] in [-1,1], and
// audio.waveform or a vocoder's waveform) from the engine's production run against its validation run, held to issue
// 19's gates, each relaxed to the official bf16 run's figure against its float32 run where that misses it (the
// manifest's production_media_gates, written by tools/reference/golden_case.py).
#pragma once

#include <optional>
#include <string>

#include "verify/media_metrics.h"
#include "verify/runner.h"

namespace ltx {

struct MediaGateResult {
  std::optional<FrameMetrics> frames, official_frames;
  std::optional<WaveformMetrics> audio, official_audio;
  MediaGates gates;
  bool pass() const;
};

// nullopt when the case decodes no media. Throws ltx::Error when a run fails.
std::optional<MediaGateResult> check_media_gates(const std::string& dir,
                                                 const ComponentRegistry& registry = ComponentRegistry::global());

}  // namespace ltx
