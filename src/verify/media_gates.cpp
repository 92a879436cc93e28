#include "verify/media_gates.h"

#include <algorithm>

#include "core/error.h"

namespace ltx {
namespace {

constexpr const char* kFrames = "video.decoded";
constexpr const char* kWaveforms[] = {"audio.waveform", "waveform"};  // a pipeline's decoded audio, a vocoder's

// [B, 3, F, H, W] in [-1, 1] -> [B·F, H, W, 3] in [0, 1], as the MP4 writer maps them (before 8-bit rounding).
std::vector<float> unit_frames(const Tensor& decoded) {
  LTX_CHECK(decoded.rank() == 5 && decoded.dim(1) == 3, "gates", kFrames, " must be [B, 3, F, H, W], got ",
            decoded.shape().str());
  return decoded.permute({0, 2, 3, 4, 1}).contiguous().to_floats();
}

FrameMetrics frames_metrics(const Tensor& a, const Tensor& b) {
  std::vector<float> x = unit_frames(a), y = unit_frames(b);
  for (std::vector<float>* v : {&x, &y})
    for (float& e : *v) e = std::clamp((e + 1.0f) / 2.0f, 0.0f, 1.0f);
  return compare_frames(x, y, a.dim(0) * a.dim(2), a.dim(3), a.dim(4), 3);
}

const Tensor& produced(const CaseResult& r, const char* name) {
  LTX_CHECK(r.status != CaseResult::Status::NotImplemented, "gates", r.dir, ": component not implemented");
  LTX_CHECK(r.error.empty(), "gates", r.dir, ": ", r.error);
  const auto it = r.produced.find(name);
  LTX_CHECK(it != r.produced.end(), "gates", r.dir, ": the engine produced no ", name);
  return it->second;
}

}  // namespace

bool MediaGateResult::pass() const { return (!frames || gates.pass(*frames)) && (!audio || gates.pass(*audio)); }

std::optional<MediaGateResult> check_media_gates(const std::string& dir, const ComponentRegistry& registry) {
  const GoldenCase c = load_golden_case(dir);
  const auto has = [&](const char* name) { return std::ranges::find(c.outputs, name) != c.outputs.end(); };
  const char* waveform = nullptr;
  for (const char* name : kWaveforms)
    if (has(name)) waveform = name;
  if (!has(kFrames) && waveform == nullptr) return std::nullopt;
  const CaseResult validation = run_golden_case(dir, Precision::Validation, registry);
  const CaseResult production = run_golden_case(dir, Precision::Production, registry);
  MediaGateResult r;
  const nlohmann::json official =
      c.manifest.contains("production_media_gates") ? c.manifest.at("production_media_gates") : nlohmann::json();
  if (has(kFrames)) {
    r.frames = frames_metrics(produced(production, kFrames), produced(validation, kFrames));
    if (official.contains(kFrames))
      r.official_frames = FrameMetrics{official.at(kFrames).at("psnr_db"), official.at(kFrames).at("ssim")};
  }
  if (waveform != nullptr) {
    r.audio = compare_waveforms(produced(production, waveform).to_floats(), produced(validation, waveform).to_floats());
    if (official.contains(waveform))
      r.official_audio = WaveformMetrics{official.at(waveform).at("rel_l2"), official.at(waveform).at("cosine")};
  }
  r.gates = MediaGates::relaxed_to(r.official_frames, r.official_audio);
  return r;
}

}  // namespace ltx
