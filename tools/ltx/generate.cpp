// `ltx generate --checkpoint FILE (--text-encoder PATH --prompt TEXT | --text-embeddings FILE) --output OUT.mp4
// [options]`: text to video with synchronized audio, written as an MP4 (H.264 + AAC).
#include "stages/generate.h"

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage =
    "usage: ltx generate --checkpoint FILE (--text-encoder PATH --prompt TEXT | --text-embeddings FILE)\n"
    "                    --output OUT.mp4 [--negative-prompt TEXT] [--frames N] [--width W] [--height H]\n"
    "                    [--fps F] [--steps N] [--seed S] [--cfg X] [--audio-cfg X] [--stg X] [--audio-stg X]\n"
    "                    [--stg-blocks I,J] [--rescale X] [--audio-rescale X] [--modality X] [--audio-modality X]\n"
    "                    [--two-stage --upsampler FILE] [--record-noise FILE | --replay-noise FILE]\n"
    "                    [--precision validation|production] [--quiet]";

double number(const std::string& option, const std::string& value) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size()) return v;
  } catch (const std::exception&) {
  }
  fail("generate", option + " needs a number, got '" + value + "'");
}

int64_t integer(const std::string& option, const std::string& value) {
  const double v = number(option, value);
  LTX_CHECK(v == static_cast<double>(static_cast<int64_t>(v)), "generate", option, " needs an integer, got '", value,
            "'");
  return static_cast<int64_t>(v);
}

std::vector<int64_t> integer_list(const std::string& option, const std::string& value) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.push_back(integer(option, item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int generate(Args args) {
  stages::GenerateRequest r;
  bool quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    auto value = [&]() -> std::string {
      LTX_CHECK(i + 1 < args.size(), "generate", a, " needs a value\n", kUsage);
      return args[++i];
    };
    auto f = [&]() { return static_cast<float>(number(a, value())); };
    if (a == "--checkpoint")
      r.checkpoint = value();
    else if (a == "--text-encoder")
      r.text_encoder = value();
    else if (a == "--text-embeddings")
      r.text_embeddings = value();
    else if (a == "--upsampler")
      r.upsampler = value();
    else if (a == "--prompt")
      r.prompt = value();
    else if (a == "--negative-prompt")
      r.negative_prompt = value();
    else if (a == "--output" || a == "-o")
      r.output = value();
    else if (a == "--two-stage")
      r.two_stage = true;
    else if (a == "--frames")
      r.frames = integer(a, value());
    else if (a == "--width")
      r.width = integer(a, value());
    else if (a == "--height")
      r.height = integer(a, value());
    else if (a == "--fps")
      r.fps = number(a, value());
    else if (a == "--steps")
      r.steps = static_cast<int>(integer(a, value()));
    else if (a == "--seed")
      r.seed = static_cast<uint64_t>(integer(a, value()));
    else if (a == "--cfg")
      r.video_guidance.cfg = f();
    else if (a == "--audio-cfg")
      r.audio_guidance.cfg = f();
    else if (a == "--stg")
      r.video_guidance.stg = f();
    else if (a == "--audio-stg")
      r.audio_guidance.stg = f();
    else if (a == "--stg-blocks")
      r.video_guidance.stg_blocks = r.audio_guidance.stg_blocks = integer_list(a, value());
    else if (a == "--rescale")
      r.video_guidance.rescale = f();
    else if (a == "--audio-rescale")
      r.audio_guidance.rescale = f();
    else if (a == "--modality")
      r.video_guidance.modality = f();
    else if (a == "--audio-modality")
      r.audio_guidance.modality = f();
    else if (a == "--record-noise")
      r.record_noise = value();
    else if (a == "--replay-noise")
      r.replay_noise = value();
    else if (a == "--precision") {
      const std::string p = value();
      LTX_CHECK(p == "validation" || p == "production", "generate", "--precision is validation or production");
      r.compute = p == "validation" ? DType::F32 : DType::BF16;
    } else if (a == "--quiet")
      quiet = true;
    else
      fail("generate", "unknown option " + a + "\n" + kUsage);
  }
  const stages::Progress progress = [quiet](const std::string& m) {
    if (!quiet) std::fprintf(stderr, "generate: %s\n", m.c_str());
  };
  const stages::GenerateReport rep = stages::generate(r, progress);
  if (!quiet) {
    std::printf("wrote %s: %lld frames %lldx%lld at %g fps, audio %lld samples at %lld Hz\n", r.output.c_str(),
                static_cast<long long>(rep.frames), static_cast<long long>(rep.width),
                static_cast<long long>(rep.height), r.fps, static_cast<long long>(rep.audio_samples),
                static_cast<long long>(rep.audio_sample_rate));
    for (const auto& [stage, s] : rep.stage_seconds) std::printf("  %-12s %.2f s\n", stage.c_str(), s);
  }
  return 0;
}

}  // namespace ltx::cli
