// What ltx::save writes beyond the MP4 from an ltx::Engine result, on the tiny one-stage golden checkpoint with its
// recorded text contexts: the WAV (16-bit PCM header and length), the PNG frames (one per frame), the JSON sidecar
// (parameters after defaults, model file sizes, a timing per stage), the progress events (one begin and end per
// stage, one step per Euler step and per decode part, with ETAs), and all-or-nothing: a save that fails while
// committing its outputs leaves none of them and no temporary file. (The text and JSON progress lines of
// `ltx generate` are tests/cli's.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/json.h"
#include "ltx/ltx.hpp"
#include "tiny_generate.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) { return test::fresh_temp_dir("outputs_test", name); }

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

uint32_t le32(const std::string& b, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[at])) |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[at + 3])) << 24;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// What a progress callback heard, in order.
struct Heard {
  int begins = 0, ends = 0, steps_denoise = 0, steps_decode = 0;
  int64_t last_total = 0;
  std::vector<std::string> problems;  // events that broke a rule
};

ProgressCallback listen(Heard& h) {
  return [&h](const ProgressEvent& e) {
    h.begins += e.kind == ProgressEvent::Kind::Begin;
    h.ends += e.kind == ProgressEvent::Kind::End;
    if (e.kind != ProgressEvent::Kind::Step) return;
    (e.stage == "denoise" ? h.steps_denoise : h.steps_decode)++;
    h.last_total = e.total;
    if (!(e.elapsed >= 0)) h.problems.push_back("a step without elapsed time");
    if (!(e.eta >= 0)) h.problems.push_back("a step without an ETA");
    if (e.step > e.total) h.problems.push_back("step " + std::to_string(e.step) + " past its total");
  };
}

TEST(GenerateOutputs, WavFramesSidecarAndProgress) {
  const fs::path dir = temp_dir("all");
  OutputFiles files;
  files.mp4 = (dir / "tiny.mp4").string();
  files.wav = (dir / "tiny.wav").string();
  files.frames_dir = (dir / "frames").string();
  files.sidecar = (dir / "tiny.json").string();

  Heard heard;
  const EngineOptions options = test::tiny_engine_options();
  Engine engine(options, listen(heard));  // the same listener hears the "load models" stage
  const GenerateRequest request = test::tiny_generate_request();
  const GenerateResult result = engine.generate(request, listen(heard));
  save(result, files);
  const Video& v = result.videos.at(0);

  // WAV: RIFF/WAVE, PCM, the vocoder's rate and channels, 2 bytes per sample.
  const std::string wav = read_all(files.wav);
  ASSERT_GE(wav.size(), 44u);
  EXPECT_EQ(wav.substr(0, 4), "RIFF");
  EXPECT_EQ(wav.substr(8, 4), "WAVE");
  EXPECT_EQ(le32(wav, 24), static_cast<uint32_t>(v.sample_rate));
  EXPECT_EQ(static_cast<uint8_t>(wav[22]), 2);  // channels
  EXPECT_EQ(le32(wav, 40), static_cast<uint32_t>(v.audio_samples() * 2 * 2));
  EXPECT_EQ(wav.size(), 44u + v.audio_samples() * 4);

  // One PNG per frame, named in order.
  const std::vector<std::string> frames = entries(files.frames_dir);
  ASSERT_EQ(static_cast<int64_t>(frames.size()), v.frames);
  EXPECT_EQ(frames.front(), "frame_00000.png");
  EXPECT_EQ(read_all(fs::path(files.frames_dir) / frames.back()).substr(1, 3), "PNG");

  // Sidecar: the settings after defaults and what the run cost.
  const Json side = Json::parse(read_all(files.sidecar));
  EXPECT_EQ(side.at("seed").get<uint64_t>(), request.seed);
  EXPECT_EQ(side.at("parameters").at("steps").get<int>(), 2);
  EXPECT_EQ(side.at("parameters").at("frames").get<int64_t>(), 9);
  EXPECT_EQ(side.at("parameters").at("guidance").at("video").at("stg_blocks"), Json::array({1}));
  EXPECT_EQ(side.at("models").at("checkpoint").at("bytes").get<int64_t>(),
            static_cast<int64_t>(fs::file_size(options.checkpoint)));
  EXPECT_TRUE(side.at("prompt").is_null());  // text embeddings, no prompt
  EXPECT_EQ(side.at("timings").size(), result.stages.size());
  EXPECT_EQ(side.at("timings").at(0).at("stage"), "load models");  // the engine's first result carries its load
  EXPECT_GT(side.at("peak_rss_bytes").get<int64_t>(), 0);
  EXPECT_EQ(side.at("ltx_version").get<std::string>(), version());
  EXPECT_EQ(side.at("outputs").at("video").get<std::string>(), files.mp4);
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"frames", "tiny.json", "tiny.mp4", "tiny.wav"}));

  // Progress: begin/end per stage, 2 Euler steps, 3 decode parts.
  EXPECT_TRUE(heard.problems.empty()) << heard.problems.front();
  EXPECT_EQ(heard.steps_denoise, 2);
  EXPECT_EQ(heard.steps_decode, 3);
  EXPECT_EQ(heard.last_total, 3);
  EXPECT_EQ(heard.begins, static_cast<int>(result.stages.size()));
  EXPECT_EQ(heard.ends, heard.begins);
  fs::remove_all(dir);
}

TEST(GenerateOutputs, FailureWhileCommittingLeavesNothing) {
  const fs::path dir = temp_dir("fail");
  OutputFiles files;
  files.mp4 = (dir / "tiny.mp4").string();
  files.wav = (dir / "tiny.wav").string();
  files.frames_dir = (dir / "frames").string();
  files.sidecar = (dir / "side.json").string();
  fs::create_directory(files.sidecar);  // the sidecar, renamed last, cannot replace a folder: the commit fails there
  Engine engine(test::tiny_engine_options());
  const GenerateResult result = engine.generate(test::tiny_generate_request());
  try {
    save(result, files);
    ADD_FAILURE() << "saved over a folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::Io) << e.what();
  }
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"side.json"}));  // no mp4, wav, frames or temporaries
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
