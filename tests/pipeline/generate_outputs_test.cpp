// `ltx generate`'s outputs beyond the MP4, on the tiny one-stage golden checkpoint with its recorded text
// contexts: the WAV (16-bit PCM header and length), the PNG frames (one per frame), the JSON sidecar (parameters
// after defaults, model file sizes, a timing per stage), the progress reporter (JSON lines that parse, one step
// event per Euler step and per decode part), and all-or-nothing: a run that fails while committing its outputs
// leaves none of them and no temporary file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/json.h"
#include "stages/generate.h"
#include "stages/progress.h"
#include "stages/sidecar.h"
#include "tiny_generate.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) { return test::fresh_temp_dir("outputs_test", name); }

stages::GenerateRequest tiny_request(const fs::path& dir) { return test::tiny_generate_request(dir / "tiny.mp4"); }

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

TEST(GenerateOutputs, WavFramesSidecarAndJsonProgress) {
  const fs::path dir = temp_dir("all");
  stages::GenerateRequest r = tiny_request(dir);
  r.wav = (dir / "tiny.wav").string();
  r.frames_dir = (dir / "frames").string();
  r.sidecar = (dir / "tiny.json").string();

  std::FILE* lines = std::tmpfile();
  ASSERT_NE(lines, nullptr);
  stages::JsonProgress progress(lines);
  const stages::GenerateReport rep = stages::generate(r, &progress);

  // WAV: RIFF/WAVE, PCM, the vocoder's rate and channels, 2 bytes per sample.
  const std::string wav = read_all(r.wav);
  ASSERT_GE(wav.size(), 44u);
  EXPECT_EQ(wav.substr(0, 4), "RIFF");
  EXPECT_EQ(wav.substr(8, 4), "WAVE");
  EXPECT_EQ(le32(wav, 24), static_cast<uint32_t>(rep.audio_sample_rate));
  EXPECT_EQ(static_cast<uint8_t>(wav[22]), 2);  // channels
  EXPECT_EQ(le32(wav, 40), static_cast<uint32_t>(rep.audio_samples * 2 * 2));
  EXPECT_EQ(wav.size(), 44u + rep.audio_samples * 4);

  // One PNG per frame, named in order.
  const std::vector<std::string> frames = entries(r.frames_dir);
  ASSERT_EQ(static_cast<int64_t>(frames.size()), rep.frames);
  EXPECT_EQ(frames.front(), "frame_00000.png");
  EXPECT_EQ(read_all(fs::path(r.frames_dir) / frames.back()).substr(1, 3), "PNG");

  // Sidecar: the settings after defaults and what the run cost.
  const Json side = Json::parse(read_all(r.sidecar));
  EXPECT_EQ(side.at("seed").get<uint64_t>(), r.seed);
  EXPECT_EQ(side.at("parameters").at("steps").get<int>(), 2);
  EXPECT_EQ(side.at("parameters").at("frames").get<int64_t>(), 9);
  EXPECT_EQ(side.at("parameters").at("guidance").at("video").at("stg_blocks"), Json::array({1}));
  EXPECT_EQ(side.at("models").at("checkpoint").at("bytes").get<int64_t>(),
            static_cast<int64_t>(fs::file_size(r.checkpoint)));
  EXPECT_TRUE(side.at("prompt").is_null());  // text embeddings, no prompt
  EXPECT_EQ(side.at("timings").size(), rep.stage_seconds.size());
  EXPECT_GT(side.at("peak_rss_bytes").get<int64_t>(), 0);
  EXPECT_EQ(side.at("ltx_version").get<std::string>(), stages::ltx_version());
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"frames", "tiny.json", "tiny.mp4", "tiny.wav"}));

  // Progress: every line one JSON object; begin/end per stage, 2 Euler steps, 3 decode parts.
  std::rewind(lines);
  char buf[4096];
  int steps_denoise = 0, steps_decode = 0, begins = 0, ends = 0;
  int64_t last_total = 0;
  while (std::fgets(buf, sizeof buf, lines)) {
    const Json j = Json::parse(buf);
    const std::string event = j.at("event");
    begins += event == "begin";
    ends += event == "end";
    if (event != "step") continue;
    ASSERT_TRUE(j.at("elapsed").is_number());
    ASSERT_TRUE(j.at("eta").is_number());
    (j.at("stage") == "denoise" ? steps_denoise : steps_decode)++;
    last_total = j.at("total").get<int64_t>();
    EXPECT_LE(j.at("step").get<int64_t>(), last_total);
  }
  std::fclose(lines);
  EXPECT_EQ(steps_denoise, 2);
  EXPECT_EQ(steps_decode, 3);
  EXPECT_EQ(last_total, 3);
  EXPECT_EQ(begins, static_cast<int>(rep.stage_seconds.size()));
  EXPECT_EQ(ends, begins);
  fs::remove_all(dir);
}

TEST(GenerateOutputs, FailureWhileCommittingLeavesNothing) {
  const fs::path dir = temp_dir("fail");
  stages::GenerateRequest r = tiny_request(dir);
  r.wav = (dir / "tiny.wav").string();
  r.frames_dir = (dir / "frames").string();
  r.sidecar = (dir / "side.json").string();
  fs::create_directory(r.sidecar);  // the sidecar, renamed last, cannot replace a folder: the commit fails there
  EXPECT_THROW(stages::generate(r), Error);
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"side.json"}));  // no mp4, wav, frames or temporaries
  fs::remove_all(dir);
}

TEST(GenerateOutputs, TextProgressPlainLinesCountSteps) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  stages::TextProgress p(out, /*is_terminal=*/false);
  p.begin("denoise");
  p.add_steps(3);
  for (int i = 0; i < 3; ++i) p.step();
  p.end();
  std::rewind(out);
  char buf[256];
  std::vector<std::string> lines;
  while (std::fgets(buf, sizeof buf, out)) lines.emplace_back(buf);
  std::fclose(out);
  ASSERT_EQ(lines.size(), 5u);  // begin, 3 steps, end; no carriage returns off a terminal
  EXPECT_EQ(lines[0], "denoise...\n");
  EXPECT_EQ(lines[3].rfind("denoise step 3/3", 0), 0u) << lines[3];
  for (const std::string& l : lines) EXPECT_EQ(l.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace ltx
