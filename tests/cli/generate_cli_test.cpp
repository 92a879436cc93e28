// `ltx generate` as a user runs it: the MP4 checked with ffprobe (one H.264 stream with the requested frame count,
// one AAC stream, durations that match), and the embedded default model (no model arguments): it is made once
// into the cache folder and reused, its run reports progress as JSON lines, and without the Gemma GGUF or with a
// bad request it fails with one clear message and makes nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_files.h"
#include "io/json.h"
#include "run_ltx.h"
#include "scoped_env.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_cli_", name); }

bool have_ffprobe() { return std::system("ffprobe -version >/dev/null 2>&1") == 0; }

std::string capture(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  return out;
}

TEST(GenerateCli, FfprobeSeesH264AndAacOfMatchingDuration) {
  if (!have_ffprobe()) GTEST_SKIP() << "ffprobe is absent (scripts/setup installs Debian's ffmpeg)";
  const fs::path dir = temp_dir("ffprobe");
  const fs::path out = dir / "tiny.mp4";
  const CliRun run = run_ltx("generate --checkpoint " + kCase + "weights.safetensors --text-embeddings " + kCase +
                             "inputs.safetensors --frames 17 --width 96 --height 64 --steps 2 --stg-blocks 1 "
                             "--precision validation --quiet --output " +
                             out.string());
  ASSERT_EQ(run.code, 0) << run.output;
  const Json probe =
      Json::parse(capture("ffprobe -v error -count_frames -show_entries "
                          "stream=codec_type,codec_name,nb_read_frames,duration,sample_rate -of json " +
                          out.string()));
  const Json& streams = probe.at("streams");
  ASSERT_EQ(streams.size(), 2u) << probe.dump();
  double video_s = 0, audio_s = 0;
  int n_video = 0, n_audio = 0;
  for (const Json& s : streams) {
    if (s.at("codec_type") == "video") {
      ++n_video;
      EXPECT_EQ(s.at("codec_name"), "h264");
      EXPECT_EQ(s.at("nb_read_frames"), "17");
      video_s = std::stod(s.at("duration").get<std::string>());
    } else {
      ++n_audio;
      EXPECT_EQ(s.at("codec_type"), "audio");
      EXPECT_EQ(s.at("codec_name"), "aac");
      EXPECT_EQ(s.at("sample_rate"), "48000");
      audio_s = std::stod(s.at("duration").get<std::string>());
    }
  }
  EXPECT_EQ(n_video, 1);
  EXPECT_EQ(n_audio, 1);
  EXPECT_NEAR(video_s, 17.0 / 24.0, 1e-3);
  // The vocoder's length is the latent's audio frames at its hop; one AAC frame (1024 samples) of slack.
  EXPECT_NEAR(audio_s, video_s, 1.0 / 24.0 + 1024.0 / 48000.0)
      << "video " << video_s << " s, audio " << audio_s << " s";
  fs::remove_all(dir);
}

TEST(GenerateCli, DefaultModelMadeOnceAndReportsJsonProgress) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("default");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const std::string args =
      "generate --prompt \"a red fox\" --frames 9 --width 64 --height 64 --steps 2 --progress json "
      "--output " +
      (dir / "fox.mp4").string();
  std::vector<std::pair<std::string, fs::file_time_type>> times;  // the cache files after the first run
  for (const bool first : {true, false}) {
    const CliRun run = run_ltx(args);
    ASSERT_EQ(run.code, 0) << run.output;
    std::istringstream lines(run.output);
    std::string line;
    int denoise_steps = 0, notes_made = 0, done = 0;
    while (std::getline(lines, line)) {
      const Json j = Json::parse(line);  // stdout holds JSON lines only
      if (j.at("event") == "step" && j.at("stage") == "denoise") ++denoise_steps;
      if (j.at("event") == "note" && j.at("message").get<std::string>().rfind("made ", 0) == 0) ++notes_made;
      if (j.at("event") == "done") {
        ++done;
        EXPECT_EQ(j.at("frames"), 9);
      }
    }
    EXPECT_EQ(denoise_steps, 2);
    EXPECT_EQ(notes_made, first ? 1 : 0);  // made on the first run, found in the cache on the second
    EXPECT_EQ(done, 1);
    if (first)
      for (const auto& e : fs::directory_iterator(dir / "cache"))
        times.emplace_back(e.path().filename().string(), fs::last_write_time(e.path()));
  }
  // The cache folder: the default model's file and the Gemma GGUF's decoded matrices, each written once (the second run
  // found both: same modification times).
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "cache")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].rfind("gemma-decoded-", 0), 0u) << names[0];
  EXPECT_EQ(names[1].rfind("ltx-world-default-", 0), 0u) << names[1];
  for (const auto& [name, time] : times) EXPECT_EQ(fs::last_write_time(dir / "cache" / name), time) << name;
  EXPECT_TRUE(fs::exists(dir / "fox.mp4"));
  fs::remove_all(dir);
}

// The embedded default runs with its own video guidance (stages/default_model.cpp apply_default_model_guidance:
// CFG 3, no STG, no modality guidance), the official audio guidance, and a request's own values over both.
TEST(GenerateCli, DefaultModelRunsWithItsGuidanceUnlessTheRequestSetsIt) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("guidance");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const auto guidance = [&](const std::string& extra) {
    const CliRun run = run_ltx(
        "generate --prompt \"a red circle\" --frames 9 --width 64 --height 64 --steps 1 "
        "--quiet --json " +
        extra + "--output " + (dir / "out.mp4").string());
    EXPECT_EQ(run.code, 0) << run.output;
    std::ifstream sidecar(dir / "out.json");
    return Json::parse(sidecar).at("parameters").at("guidance");
  };
  const Json d = guidance("");
  EXPECT_EQ(d.at("video").at("cfg"), 3.0);
  EXPECT_EQ(d.at("video").at("stg"), 0.0);
  EXPECT_EQ(d.at("video").at("modality"), 1.0);
  EXPECT_EQ(d.at("audio").at("cfg"), 7.0);
  EXPECT_EQ(d.at("audio").at("stg"), 1.0);
  EXPECT_EQ(d.at("audio").at("modality"), 3.0);
  const Json given = guidance("--cfg 5 --stg 1 ");
  EXPECT_EQ(given.at("video").at("cfg"), 5.0);
  EXPECT_EQ(given.at("video").at("stg"), 1.0);
  EXPECT_EQ(given.at("video").at("modality"), 1.0);
  fs::remove_all(dir);
}

TEST(GenerateCli, DefaultModelWithoutGemmaOrWithBadRequestMakesNothing) {
  const fs::path dir = temp_dir("nogemma");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  {
    const ScopedEnv gguf("LTX_GEMMA_GGUF", (dir / "absent.gguf").string());
    const ScopedEnv home("HOME", (dir / "home").string());
    const CliRun run = run_ltx("generate --prompt fox --output " + (dir / "fox.mp4").string());
    EXPECT_NE(run.code, 0);
    EXPECT_TRUE(has(run.output, "scripts/setup")) << run.output;
  }
  const CliRun bad = run_ltx("generate --prompt fox --frames 10 --output " + (dir / "fox.mp4").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(has(bad.output, "9")) << bad.output;  // names the nearest valid frame counts
  EXPECT_FALSE(fs::exists(dir / "fox.mp4"));
  EXPECT_FALSE(fs::exists(dir / "cache"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
