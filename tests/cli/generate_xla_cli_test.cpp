// `ltx generate --backend xla`: the embedded default model with every graph compiled by XLA (the CPU plugin
// scripts/setup installs) writes the video the CPU backend writes, within the media gates (`ltx compare-media
// --check`); a plugin that cannot load is refused before any work, naming it, and nothing is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_files.h"
#include "run_ltx.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

#ifdef LTX_HAVE_XLA
const std::string kPrompt =
    "--prompt \"A red circle moves to the left across a plain blue background. A steady tone plays.\" ";

TEST(GenerateXlaCli, TheDefaultModelOnXlaMatchesTheCpuWithinTheMediaGates) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = fresh_temp_dir("ltx_generate_xla_", "default");
  // Ten steps at validation precision: over the default 30 the tiny model amplifies f32 summation-order differences
  // (XLA's tree reductions against our kernels') to SSIM 0.987, PSNR 45 dB (the closing note of issue 33).
  const std::string request = kPrompt + "--steps 10 --precision validation --quiet ";
  const CliRun cpu = run_ltx("generate " + request + "-o " + (dir / "cpu.mp4").string());
  ASSERT_EQ(cpu.code, 0) << cpu.output;
  const CliRun xla = run_ltx("generate " + request + "--backend xla -o " + (dir / "xla.mp4").string());
  ASSERT_EQ(xla.code, 0) << xla.output;
  const CliRun compared =
      run_ltx("compare-media " + (dir / "xla.mp4").string() + " " + (dir / "cpu.mp4").string() + " --check");
  EXPECT_EQ(compared.code, 0) << compared.output;
  fs::remove_all(dir);
}

TEST(GenerateXlaCli, APluginThatCannotLoadIsRefusedBeforeAnyWork) {
  const fs::path dir = fresh_temp_dir("ltx_generate_xla_", "plugin");
  const CliRun run = run_ltx("generate " + kPrompt + "--backend xla --xla-plugin /nonexistent/pjrt_plugin.so -o " +
                             (dir / "out.mp4").string());
  EXPECT_NE(run.code, 0);
  EXPECT_TRUE(has(run.output, "XLA plugin '/nonexistent/pjrt_plugin.so' could not be loaded")) << run.output;
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}
#else
TEST(GenerateXlaCli, NeedsTheXlaBackend) { GTEST_SKIP() << "this build has no XLA backend (scripts/setup)"; }
#endif

}  // namespace
}  // namespace ltx
