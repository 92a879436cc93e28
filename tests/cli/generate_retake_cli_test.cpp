// `ltx generate --retake FILE --start S --end S` on the embedded default model, with a source clip FFmpeg makes
// (H.264 + AAC, 17 frames of 64x64 at 24 fps): the MP4 has the source's frame count and size; keeping the whole
// video (--retake-keep-video) gives the same frames whatever the seed (no video token is regenerated), a window does
// not; bad sources and windows are refused before any work with nothing written. The flow itself is compared with
// the reference in tests/golden/pipeline/retake.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_files.h"
#include "run_ltx.h"
#include "scoped_env.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_retake_cli_", name); }

// `frames` frames of FFmpeg's test pattern at 64x64, 24 fps, with a 440 Hz tone as long; false without ffmpeg.
bool make_clip(const fs::path& mp4, int frames) {
  const std::string seconds = std::to_string((frames - 0.5) / 24.0);  // `frames` frames, not one more
  const std::string cmd = "ffmpeg -v error -y -f lavfi -i testsrc=size=64x64:rate=24:duration=" + seconds +
                          " -f lavfi -i sine=frequency=440:sample_rate=48000:duration=" + seconds +
                          " -c:v libx264 -pix_fmt yuv420p -c:a aac " + mp4.string() + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 && fs::exists(mp4);
}

constexpr const char* kRun = "generate --prompt \"a red fox\" --steps 2 --quiet ";

TEST(GenerateRetakeCli, KeepsWhatItShouldAndRefusesBadInputs) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("retake");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const fs::path src = dir / "src.mp4";
  if (!make_clip(src, 17)) GTEST_SKIP() << "the ffmpeg command is absent (scripts/setup installs Debian's ffmpeg)";
  const std::string retake = "--retake " + src.string() + " --start 0.2 --end 0.5 ";
  auto run = [&](const std::string& name, const std::string& extra) {
    return run_ltx(std::string(kRun) + retake + extra + " --json --frames-dir " + (dir / name).string() + " --output " +
                   (dir / (name + ".mp4")).string());
  };
  for (const char* seed : {"1", "2"}) {
    const CliRun window = run(std::string("window") + seed, std::string("--seed ") + seed);
    ASSERT_EQ(window.code, 0) << window.output;
    const CliRun kept = run(std::string("kept") + seed, std::string("--retake-keep-video --seed ") + seed);
    ASSERT_EQ(kept.code, 0) << kept.output;
  }
  const int frames = count_video_frames(dir / "window1.mp4");
  if (frames >= 0) EXPECT_EQ(frames, 17);
  EXPECT_TRUE(fs::exists(dir / "window1" / "frame_00016.png"));
  EXPECT_FALSE(fs::exists(dir / "window1" / "frame_00017.png"));
  for (const char* frame : {"frame_00000.png", "frame_00008.png", "frame_00016.png"}) {
    EXPECT_EQ(read_all(dir / "kept1" / frame), read_all(dir / "kept2" / frame)) << frame;
    EXPECT_NE(read_all(dir / "window1" / frame), read_all(dir / "window2" / frame)) << frame;
  }
  const std::string sidecar = read_all(dir / "window1.json");
  EXPECT_TRUE(has(sidecar, "\"retake\": {")) << sidecar;
  EXPECT_TRUE(has(sidecar, "\"width\": 64")) << sidecar;

  const fs::path odd = dir / "odd.mp4";
  ASSERT_TRUE(make_clip(odd, 12));
  struct Bad {
    std::string args, message;
  };
  for (const Bad& bad : {Bad{"--retake " + odd.string() + " --start 0 --end 0.2", "retake needs 8k+1"},
                         Bad{retake.substr(0, retake.find(" --start")) + " --start 2 --end 3", "outside the clip"},
                         Bad{"--retake " + src.string() + " --start 0.5 --end 0.2", "0 <= start < end"},
                         Bad{"--retake " + (dir / "none.mp4").string() + " --start 0 --end 1", "does not exist"},
                         Bad{retake + "--frames 9", "--frames does not apply with --retake"},
                         Bad{retake + "--retake-keep-video --retake-keep-audio", "regenerates nothing"},
                         Bad{retake + "--image " + src.string(), "retake takes no images"},
                         Bad{"--start 0.2 --end 0.5", "need --retake FILE"}}) {
    const CliRun r = run_ltx(std::string(kRun) + bad.args + " --output " + (dir / "bad.mp4").string());
    EXPECT_NE(r.code, 0) << bad.args;
    EXPECT_TRUE(has(r.output, bad.message)) << bad.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir / "bad.mp4")) << bad.args;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
