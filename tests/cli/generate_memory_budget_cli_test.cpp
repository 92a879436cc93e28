// `ltx generate --memory-budget`: the video decode is planned against the budget and the chosen strategy printed;
// a budget below every strategy's planned peak fails naming the smallest peak and writes nothing; a malformed
// size fails before any work. On the one-stage pipeline golden case (latent [1, 8, 2, 2, 3]; whole decode planned
// at 1991040 bytes). And a budget is a limit: the process's peak resident set stays within it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/json.h"
#include "run_ltx.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";

std::string generate_args(const fs::path& out, const std::string& budget) {
  return "generate --checkpoint " + kCase + "weights.safetensors --text-embeddings " + kCase +
         "inputs.safetensors --frames 9 --height 64 --width 96 --steps 1 --precision validation -o " + out.string() +
         " --memory-budget " + budget;
}

TEST(GenerateMemoryBudgetCli, PlansTheDecodeAgainstTheBudget) {
  const fs::path dir = fs::temp_directory_path() / ("ltx_memory_budget_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);

  // The budget governs the whole run (stages/memory_plan.h): the plan is printed before any work, the decode
  // planned within what is left.
  const CliRun fits = run_ltx(generate_args(dir / "fits.mp4", "512M"));
  ASSERT_EQ(fits.code, 0) << fits.output;
  EXPECT_TRUE(has(fits.output, "memory plan: budget 0.5 GiB")) << fits.output;
  EXPECT_TRUE(has(fits.output, "video decode: whole: 1 item(s) per run")) << fits.output;
  EXPECT_TRUE(fs::exists(dir / "fits.mp4"));

  const CliRun too_small = run_ltx(generate_args(dir / "small.mp4", "1M"));
  EXPECT_NE(too_small.code, 0);
  EXPECT_TRUE(has(too_small.output, "96x64x9 needs at least")) << too_small.output;
  EXPECT_TRUE(has(too_small.output, "but the memory budget is")) << too_small.output;
  EXPECT_FALSE(has(too_small.output, "denoise...")) << "refused before any heavy work";
  EXPECT_FALSE(fs::exists(dir / "small.mp4"));

  const CliRun malformed = run_ltx(generate_args(dir / "bad.mp4", "12Q"));
  EXPECT_NE(malformed.code, 0);
  EXPECT_TRUE(has(malformed.output, "--memory-budget '12Q'")) << malformed.output;
  EXPECT_FALSE(has(malformed.output, "decode...")) << "a malformed budget must fail before any work";
  fs::remove_all(dir);
}

// The embedded default model under 350 MiB: Gemma 3 270M's decoded matrices (0.24 GiB) do not fit beside the process
// and the text encoder's activations, so its phase streams. The whole run's peak resident set (VmHWM, in the sidecar)
// stays within the budget. It once peaked at 403 MB against 367 MB: checking the decoded-matrix cache mapped all of
// it at load, and the embedding table (only gathered from) was read whole ahead of the first step.
TEST(GenerateMemoryBudgetCli, PeakStaysWithinTheBudget) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "peak RSS under AddressSanitizer counts its shadow memory and quarantine: checked in the optimized "
                  "build";
#endif
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = fs::temp_directory_path() / ("ltx_memory_peak_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  constexpr int64_t kBudget = int64_t{350} << 20;
  const CliRun run = run_ltx(
      "generate --prompt \"A red circle moves to the left across a plain blue background.\" "
      "--memory-budget 350M --json -o " +
      (dir / "out.mp4").string());
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(has(run.output, "streamed")) << "the text encoder should stream under this budget: " << run.output;
  std::ifstream sidecar(dir / "out.json");
  const int64_t peak = Json::parse(sidecar).at("peak_rss_bytes").get<int64_t>();
  EXPECT_LE(peak, kBudget) << run.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
