// `ltx generate --image` and batches on the embedded default model (no model arguments: the trained world model, which
// has a VAE encoder, and the Gemma 3 270M GGUF). These tests run it off its world and size (a test pattern, 64x64,
// 2 steps), so they show that the whole path runs (image read, libx264 still round trip, resize/crop, VAE encode,
// frame-0 latent replacement and an appended keyframe through the DiT, decode) and that the conditioning reaches the
// output: the frames differ from the run without images at the same seed. That the first frame keeps the image is
// tests/world/test_adherence.py (a scene of the world at its size); that frame 0's latent is replaced exactly is
// tested on the golden model (tests/pipeline/image_conditioning_test.cpp, LatentReplacementAndKeyframeAppend).
// Several prompts (--prompt repeated, --prompts-file) write one MP4 per item; an unreadable image fails before any
// work.
#include <gtest/gtest.h>
#include <unistd.h>

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

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_image_cli_", name); }

// A 200x150 test pattern written by ltx itself is not available, so FFmpeg's lavfi makes one.
bool make_test_image(const fs::path& png) {
  const std::string cmd =
      "ffmpeg -v error -y -f lavfi -i testsrc=size=200x150 -frames:v 1 " + png.string() + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 && fs::exists(png);
}

constexpr const char* kSmall = " --frames 9 --width 64 --height 64 --steps 2 --quiet ";

TEST(GenerateImageCli, DefaultModelImageAndKeyframeRunAndChangeTheOutput) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("image");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const fs::path png = dir / "in.png";
  if (!make_test_image(png)) GTEST_SKIP() << "the ffmpeg command is absent (scripts/setup installs Debian's ffmpeg)";
  const CliRun plain = run_ltx("generate --prompt \"a red fox\"" + std::string(kSmall) + "--frames-dir " +
                               (dir / "plain").string() + " --output " + (dir / "plain.mp4").string());
  ASSERT_EQ(plain.code, 0) << plain.output;
  const CliRun cond = run_ltx("generate --prompt \"a red fox\"" + std::string(kSmall) + "--image " + png.string() +
                              " --image " + png.string() + ":8:0.8 --frames-dir " + (dir / "cond").string() +
                              " --output " + (dir / "cond.mp4").string());
  ASSERT_EQ(cond.code, 0) << cond.output;
  EXPECT_EQ(cond.output.find("libx264"), std::string::npos) << cond.output;  // --quiet: no encoder statistics
  ASSERT_TRUE(fs::exists(dir / "cond.mp4"));
  for (const char* frame : {"frame_00000.png", "frame_00008.png"})
    EXPECT_NE(read_all(dir / "cond" / frame), read_all(dir / "plain" / frame)) << frame;

  const CliRun bad = run_ltx("generate --prompt fox" + std::string(kSmall) + "--image " +
                             (dir / "absent.png").string() + " --output " + (dir / "bad.mp4").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(has(bad.output, "absent.png")) << bad.output;
  EXPECT_FALSE(fs::exists(dir / "bad.mp4"));
  fs::remove_all(dir);
}

// Keyframe interpolation adds frame 0's image as keyframe tokens instead of replacing frame 0's latent: the same
// images give other frames (the flow itself: tests/golden/pipeline/keyframe_interpolation); without images it is
// refused before any work.
TEST(GenerateImageCli, KeyframeInterpolationConditionsOtherwiseAndNeedsImages) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("interpolate");
  const fs::path png = dir / "in.png";
  if (!make_test_image(png)) GTEST_SKIP() << "the ffmpeg command is absent (scripts/setup installs Debian's ffmpeg)";
  const std::string images = "--image " + png.string() + " --image " + png.string() + ":8 ";
  for (const char* mode : {"replace", "interpolate"}) {
    const std::string extra = std::string(mode) == "interpolate" ? "--keyframe-interpolation " : "";
    const CliRun run =
        run_ltx("generate --prompt \"a red fox\"" + std::string(kSmall) + images + extra + "--json --frames-dir " +
                (dir / mode).string() + " --output " + (dir / (std::string(mode) + ".mp4")).string());
    ASSERT_EQ(run.code, 0) << run.output;
  }
  EXPECT_NE(read_all(dir / "replace" / "frame_00000.png"), read_all(dir / "interpolate" / "frame_00000.png"));
  EXPECT_NE(read_all(dir / "interpolate.json").find("\"keyframe_interpolation\": true"), std::string::npos);
  const CliRun bare = run_ltx("generate --prompt fox" + std::string(kSmall) + "--keyframe-interpolation --output " +
                              (dir / "bare.mp4").string());
  EXPECT_NE(bare.code, 0);
  EXPECT_TRUE(has(bare.output, "keyframe_interpolation needs images")) << bare.output;
  EXPECT_FALSE(fs::exists(dir / "bare.mp4"));
  fs::remove_all(dir);
}

TEST(GenerateImageCli, DefaultModelSeveralPromptsWriteOneMp4Each) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("prompts");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  std::ofstream(dir / "prompts.txt") << "the sea at dawn\n\na city at night\r\n";
  const CliRun run = run_ltx("generate --prompt \"a red fox\" --prompts-file " + (dir / "prompts.txt").string() +
                             " --batch 2" + kSmall + "--output " + (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  for (int i = 0; i < 6; ++i)  // 3 prompts x 2 samples
    EXPECT_TRUE(fs::exists(dir / ("out_" + std::to_string(i) + ".mp4"))) << i;
  EXPECT_FALSE(fs::exists(dir / "out.mp4"));
  EXPECT_FALSE(fs::exists(dir / "out_6.mp4"));
  // Items of different prompts (0: fox, 2: sea) and samples of one prompt (0, 1) all differ.
  EXPECT_NE(read_all(dir / "out_0.mp4"), read_all(dir / "out_1.mp4"));
  EXPECT_NE(read_all(dir / "out_0.mp4"), read_all(dir / "out_2.mp4"));

  const CliRun empty = run_ltx("generate --prompts-file " + (dir / "none.txt").string() + kSmall + "--output " +
                               (dir / "x.mp4").string());
  EXPECT_NE(empty.code, 0);
  EXPECT_TRUE(has(empty.output, "none.txt")) << empty.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
