// `ltx generate` on the public API, as a user sees it: --help and `ltx --version`; every numeric option outside its
// range refused before any work, naming the option and the range; the text progress off a terminal (a plain line
// per stage start, step and end, no carriage returns) and --json's sidecar; and `--repeat 2`: one engine, two runs, the
// load reported with the first only. On the one-stage pipeline golden case.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_files.h"
#include "io/json.h"
#include "ltx/engine.hpp"
#include "run_ltx.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";
const std::string kTiny = "--checkpoint " + kCase + "weights.safetensors --text-embeddings " + kCase +
                          "inputs.safetensors --frames 9 --height 64 --width 96 --steps 2 --precision validation ";

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_options_", name); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(GenerateOptionsCli, HelpAndVersion) {
  const CliRun help = run_ltx("generate --help");
  EXPECT_EQ(help.code, 0) << help.output;
  EXPECT_TRUE(has(help.output, "usage: ltx generate")) << help.output;
  const CliRun h = run_ltx("generate -h");
  EXPECT_EQ(h.code, 0) << h.output;
  EXPECT_EQ(h.output, help.output);
  const CliRun version = run_ltx("--version");
  EXPECT_EQ(version.code, 0) << version.output;
  EXPECT_EQ(version.output, "ltx " + std::string(ltx::version()) + "\n");
}

TEST(GenerateOptionsCli, NumbersOutsideTheirRangeAreRefusedNamingTheRange) {
  const fs::path dir = temp_dir("ranges");
  const std::string out = " -o " + (dir / "out.mp4").string();
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--steps 0", {"--steps must be at least 1, got 0"}},
      {"--steps two", {"--steps needs an integer"}},
      {"--batch 0", {"--batch must be at least 1, got 0"}},
      {"--repeat 0", {"--repeat must be at least 1, got 0"}},
      {"--fps 0", {"--fps must be > 0"}},
      {"--fps inf", {"--fps needs a finite number"}},
      {"--seed -1", {"--seed needs an integer in [0, 2^64)"}},
      {"--cfg nan", {"--cfg needs a finite number"}},
      {"--stg-blocks 1,-2", {"--stg-blocks must be at least 0, got -2"}},
      {"--video-skip-step -1", {"--video-skip-step must be at least 0, got -1"}},
      {"--audio-skip-step 1.5", {"--audio-skip-step needs an integer"}},
      {"--frames 10", {"frames 10 is not 8k+1 (nearest: 9 or 17)"}},
      {"--width 100", {"width 100 is not a multiple of 32"}},
      {"--image x.png:0:1.5:60", {"strength", "[0, 1]", "CRF 60 is outside 0..51"}},
      {"--memory-budget 12Q", {"--memory-budget '12Q'"}},
  };
  for (const auto& [option, words] : cases) {
    const CliRun run = run_ltx("generate " + kTiny + option + out);
    EXPECT_NE(run.code, 0) << option;
    for (const std::string& w : words) EXPECT_TRUE(has(run.output, w)) << option << ": " << run.output;
    EXPECT_FALSE(has(run.output, "load models")) << option << ": refused after work began";
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(GenerateOptionsCli, TextProgressOffATerminalIsPlainLinesAndJsonWritesTheSidecar) {
  const fs::path dir = temp_dir("text");
  const CliRun run = run_ltx("generate " + kTiny + "--json --backend cpu -o " + (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output.find('\r'), std::string::npos) << "carriage returns off a terminal";
  // --json: the sidecar beside the MP4, recording it.
  ASSERT_TRUE(fs::exists(dir / "out.json")) << run.output;
  std::ifstream sidecar(dir / "out.json");
  const Json side = Json::parse(sidecar);
  EXPECT_EQ(side.at("outputs").at("video"), (dir / "out.mp4").string());
  EXPECT_EQ(side.at("outputs").at("sidecar"), (dir / "out.json").string());
  EXPECT_EQ(side.at("parameters").at("guidance").at("video").at("skip_step"), 0);
  EXPECT_EQ(side.at("parameters").at("backend"), "cpu");
  const std::vector<std::string> lines = lines_of(run.output);
  const auto at = [&](const std::string& line) {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].rfind(line, 0) == 0) return static_cast<int>(i);
    return -1;
  };
  for (const char* line : {"load models...", "denoise...", "denoise step 1/2", "denoise step 2/2", "denoise done",
                           "decode step 3/3", "write done"})
    EXPECT_GE(at(line), 0) << "no line starting '" << line << "' in:\n" << run.output;
  EXPECT_LT(at("denoise..."), at("denoise step 1/2"));
  EXPECT_LT(at("denoise step 2/2"), at("denoise done"));
  EXPECT_TRUE(has(run.output, "wrote " + (dir / "out.mp4").string() + ": 9 frames 96x64 at 24 fps")) << run.output;
  fs::remove_all(dir);
}

TEST(GenerateOptionsCli, AnUnknownBackendIsRefusedNamingTheValidOnes) {
  const fs::path dir = temp_dir("backend");
  const CliRun run = run_ltx("generate " + kTiny + "--backend cuda -o " + (dir / "out.mp4").string());
  EXPECT_NE(run.code, 0);
  EXPECT_TRUE(has(run.output, "backend 'cuda' is not one of this build's (valid: cpu")) << run.output;
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// The video and audio guiders skip steps apart (the pipeline itself: tests/golden/pipeline/t2v_skip_video_steps).
TEST(GenerateOptionsCli, VideoAndAudioSkipStepsAreSetApart) {
  const fs::path dir = temp_dir("skip");
  const CliRun run = run_ltx("generate " + kTiny + "--video-skip-step 1 --audio-skip-step 2 --quiet --json -o " +
                             (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  std::ifstream sidecar(dir / "out.json");
  const Json guidance = Json::parse(sidecar).at("parameters").at("guidance");
  EXPECT_EQ(guidance.at("video").at("skip_step"), 1);
  EXPECT_EQ(guidance.at("audio").at("skip_step"), 2);
  fs::remove_all(dir);
}

TEST(GenerateOptionsCli, RepeatRunsOneEngineAndReportsTheLoadWithTheFirstRun) {
  const fs::path dir = temp_dir("repeat");
  const CliRun run = run_ltx("generate " + kTiny + "--repeat 2 --progress json -o " + (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  std::vector<Json> done;
  int loads = 0;
  for (const std::string& line : lines_of(run.output)) {
    const Json j = Json::parse(line);  // stdout holds JSON lines only
    if (j.at("event") == "begin" && j.at("stage") == "load models") ++loads;
    if (j.at("event") == "done") done.push_back(j);
  }
  EXPECT_EQ(loads, 1);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].at("run"), 1);
  EXPECT_EQ(done[1].at("run"), 2);
  EXPECT_TRUE(done[0].at("stage_seconds").contains("load models"));
  EXPECT_FALSE(done[1].at("stage_seconds").contains("load models"));
  for (const Json& d : done)
    for (const char* stage : {"denoise", "decode", "write"}) EXPECT_TRUE(d.at("stage_seconds").contains(stage));
  EXPECT_GE(done[0].at("seconds").get<double>(), done[0].at("stage_seconds").at("load models").get<double>());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
