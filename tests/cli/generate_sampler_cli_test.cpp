// `ltx generate --sampler res2s` on the embedded default model: the HQ pipeline's second-order sampler runs through
// the whole path (two DiT evaluations per step, the SDE noise), writes an MP4 of the requested length that differs
// from the Euler run at the same seed, and records the sampler in the sidecar; an unknown sampler is refused before
// any work. The loop itself is compared with the reference step by step in tests/golden/pipeline/two_stage_hq.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
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

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_sampler_cli_", name); }

// ffprobe's count of decoded video frames, or -1 without ffprobe.
constexpr const char* kSmall = " --frames 9 --width 64 --height 64 --steps 2 --seed 3 --quiet ";

TEST(GenerateSamplerCli, Res2sRunsDiffersFromEulerAndIsRecorded) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = temp_dir("res2s");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  for (const char* sampler : {"euler", "res2s"}) {
    const CliRun run = run_ltx("generate --prompt \"a red fox\"" + std::string(kSmall) + "--sampler " + sampler +
                               " --json --frames-dir " + (dir / sampler).string() + " --output " +
                               (dir / (std::string(sampler) + ".mp4")).string());
    ASSERT_EQ(run.code, 0) << run.output;
  }
  const int frames = count_video_frames(dir / "res2s.mp4");
  if (frames >= 0) EXPECT_EQ(frames, 9);
  EXPECT_NE(read_all(dir / "euler" / "frame_00004.png"), read_all(dir / "res2s" / "frame_00004.png"));
  EXPECT_TRUE(has(read_all(dir / "res2s.json"), "\"sampler\": \"res2s\""));
  EXPECT_TRUE(has(read_all(dir / "euler.json"), "\"sampler\": \"euler\""));

  const CliRun bad =
      run_ltx("generate --prompt fox" + std::string(kSmall) + "--sampler heun --output " + (dir / "bad.mp4").string());
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(has(bad.output, "--sampler is euler or res2s, got heun")) << bad.output;
  EXPECT_FALSE(fs::exists(dir / "bad.mp4"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
