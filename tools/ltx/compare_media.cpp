// `ltx compare-media A B [--check]`: what a person sees and hears, compared. A and B are any files FFmpeg reads
// (MP4, WAV, an image sequence such as dir/frame_%05d.png); B is the reference. Prints PSNR and SSIM of the frames
// (8-bit RGB as [0, 1]) when both have video, relative L2 and cosine of the waveforms when both have audio. With
// --check the exit code is 1 when a figure misses issue 19's gates (SSIM >= 0.99, PSNR >= 40 dB, rel L2 <= 0.10,
// cosine >= 0.99).
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "io/media_read.h"
#include "verify/media_metrics.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage = "usage: ltx compare-media A B [--check]   (B is the reference)";

std::vector<float> unit_range(const std::vector<uint8_t>& rgb) {
  std::vector<float> v(rgb.size());
  for (size_t i = 0; i < rgb.size(); ++i) v[i] = static_cast<float>(rgb[i]) / 255.0f;
  return v;
}

}  // namespace

int compare_media(Args args) {
  std::vector<std::string> paths;
  bool check = false;
  for (const char* a : args) {
    const std::string s = a;
    if (s == "--check")
      check = true;
    else if (s == "--help" || s == "-h") {
      std::printf("%s\n", kUsage);
      return 0;
    } else if (s.starts_with("--"))
      fail("compare-media", "unknown option " + s + "; valid: --check\n" + kUsage);
    else
      paths.push_back(s);
  }
  LTX_CHECK(paths.size() == 2, "compare-media", "needs two files, got ", paths.size(), "\n", kUsage);
  const MediaGates gates;
  bool compared = false, pass = true;
  const auto va = io::read_video(paths[0]), vb = io::read_video(paths[1]);
  if (va && vb) {
    LTX_CHECK(va->height == vb->height && va->width == vb->width, "compare-media", "frame sizes differ: ", va->width,
              "x", va->height, " vs ", vb->width, "x", vb->height);
    LTX_CHECK(va->frames == vb->frames, "compare-media", "frame counts differ: ", va->frames, " vs ", vb->frames);
    const FrameMetrics m =
        compare_frames(unit_range(va->rgb), unit_range(vb->rgb), va->frames, va->height, va->width, 3);
    std::printf("video  %lld frames %lldx%lld: %s%s\n", static_cast<long long>(va->frames),
                static_cast<long long>(va->width), static_cast<long long>(va->height), describe(m).c_str(),
                check ? (gates.pass(m) ? "  (gates pass)" : "  (gates FAIL)") : "");
    pass = pass && gates.pass(m);
    compared = true;
  }
  const auto aa = io::read_audio(paths[0]), ab = io::read_audio(paths[1]);
  if (aa && ab) {
    LTX_CHECK(aa->sample_rate == ab->sample_rate && aa->channels == ab->channels, "compare-media",
              "audio formats differ: ", aa->channels, " channels at ", aa->sample_rate, " Hz vs ", ab->channels, " at ",
              ab->sample_rate);
    LTX_CHECK(aa->length() == ab->length(), "compare-media", "audio lengths differ: ", aa->length(), " vs ",
              ab->length(), " samples");
    const WaveformMetrics m = compare_waveforms(aa->samples, ab->samples);
    std::printf("audio  %lld samples x %lld channels at %lld Hz: %s%s\n", static_cast<long long>(aa->length()),
                static_cast<long long>(aa->channels), static_cast<long long>(aa->sample_rate), describe(m).c_str(),
                check ? (gates.pass(m) ? "  (gates pass)" : "  (gates FAIL)") : "");
    pass = pass && gates.pass(m);
    compared = true;
  }
  LTX_CHECK(compared, "compare-media", paths[0], " and ", paths[1], " have no video or audio stream in common");
  return check && !pass ? 1 : 0;
}

}  // namespace ltx::cli
