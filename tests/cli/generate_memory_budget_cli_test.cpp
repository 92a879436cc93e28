// `ltx generate --memory-budget`: the video decode is planned against the budget and the chosen strategy printed;
// a budget below every strategy's planned peak fails naming the smallest peak and writes nothing; a malformed
// size fails before any work. On the one-stage pipeline golden case (latent [1, 8, 2, 2, 3]; whole decode planned
// at 1991040 bytes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "run_ltx.h"

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

}  // namespace
}  // namespace ltx
