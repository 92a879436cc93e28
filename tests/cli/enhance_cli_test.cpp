// `ltx enhance` and `ltx generate --enhance-prompt` on the Gemma 3 270M GGUF scripts/setup installs (a base model:
// its rewrites are poor, but the path is the 12B instruction model's): a seed gives the same text in any run and at
// any thread count, the greedy reply is printed, the sidecar records the given and the enhanced prompt, and bad
// inputs are refused with one message and nothing written. Token-level agreement with transformers is
// tests/gemma3/generation_test.cpp's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_files.h"
#include "gemma3/mmproj_file.h"
#include "io/png_write.h"
#include "run_ltx.h"
#include "scoped_env.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEnhance = "enhance --prompt \"a red fox in fresh snow\" --max-new-tokens 12 ";

// The enhanced prompt: the output without the timing line ("prompt N tokens in ... tokens/s") on stderr.
std::string enhanced(const CliRun& r) {
  std::string out, line;
  std::istringstream lines(r.output);
  while (std::getline(lines, line))
    if (!(line.rfind("prompt ", 0) == 0 && line.find("tokens/s") != std::string::npos)) out += line + "\n";
  return out;
}

TEST(EnhanceCli, SeededRepliesRepeatAcrossRunsAndThreads) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const CliRun a = run_ltx(std::string(kEnhance) + "--seed 5");
  ASSERT_EQ(a.code, 0) << a.output;
  EXPECT_NE(a.output.find("new tokens in"), std::string::npos) << a.output;
  CliRun b;
  {
    const ScopedEnv one_thread("LTX_THREADS", "1");
    b = run_ltx(std::string(kEnhance) + "--seed 5");
  }
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_EQ(enhanced(a), enhanced(b));
  EXPECT_FALSE(enhanced(a).empty());
  const CliRun greedy = run_ltx(std::string(kEnhance) + "--greedy");
  ASSERT_EQ(greedy.code, 0) << greedy.output;
}

TEST(EnhanceCli, BadInputsAreRefused) {
  const std::pair<std::string, std::string> bad[] = {
      {"enhance --max-new-tokens 4", "--prompt is required"},
      {std::string(kEnhance) + "--max-new-tokens 0", "--max-new-tokens"},
      {std::string(kEnhance) + "--text-encoder /nonexistent/gemma.gguf", "/nonexistent/gemma.gguf"},
      {std::string(kEnhance) + "--system-prompt /nonexistent/system.txt", "cannot be read"},
      {std::string(kEnhance) + "--bogus", "unknown option --bogus"},
  };
  for (const auto& [args, message] : bad) {
    const CliRun r = run_ltx(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(EnhanceCli, GenerateRecordsBothPrompts) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = fresh_temp_dir("ltx_enhance_cli_", "generate");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const fs::path system = dir / "system.txt";
  {
    std::ofstream f(system);
    f << "Describe the video in one sentence.\n";
  }
  const CliRun r =
      run_ltx("generate --prompt \"a red fox\" --enhance-prompt --enhance-system-prompt " + system.string() +
              " --enhance-max-new-tokens 16 --steps 2 --json --output " + (dir / "fox.mp4").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("enhanced prompt:"), std::string::npos) << r.output;
  const std::string sidecar = read_all(dir / "fox.json");
  EXPECT_NE(sidecar.find("\"original_prompt\": \"a red fox\""), std::string::npos) << sidecar;
  // Without a text encoder (precomputed contexts) there is nothing to enhance with.
  const std::string tiny = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";
  const CliRun no_encoder = run_ltx("generate --checkpoint " + tiny + "weights.safetensors --text-embeddings " + tiny +
                                    "inputs.safetensors --enhance-prompt --output " + (dir / "no.mp4").string());
  EXPECT_NE(no_encoder.code, 0);
  EXPECT_NE(no_encoder.output.find("enhance_prompt"), std::string::npos) << no_encoder.output;
  EXPECT_FALSE(fs::exists(dir / "no.mp4"));
  fs::remove_all(dir);
}

// An image is shown to Gemma through a vision tower: refused, before any model is read, for the text-only 270M GGUF
// and an unreadable image; seen through an mmproj file (random weights of the 270M's width: the path, not the
// prose), by `ltx enhance` and by `ltx generate --enhance-prompt` with an image.
TEST(EnhanceCli, ImagesAreSeenThroughAVisionTower) {
  if (stages::find_default_text_encoder().empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = fresh_temp_dir("ltx_enhance_cli_", "image");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const std::string image = (dir / "frame.png").string(), mmproj = (dir / "mmproj.gguf").string();
  std::vector<uint8_t> rgb(48 * 64 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 13);
  io::write_png(image, 48, 64, rgb);
  gemma3::testing::write_mmproj(mmproj, {.image = 56, .text = 640}, gemma3::testing::seeded_values);

  const std::pair<std::string, std::string> bad[] = {
      {std::string(kEnhance) + "--image " + image, "no vision tower"},
      {std::string(kEnhance) + "--image /nonexistent/frame.png --mmproj " + mmproj, "/nonexistent/frame.png"},
      {std::string(kEnhance) + "--image " + image + " --mmproj /nonexistent/mmproj.gguf", "/nonexistent/mmproj.gguf"},
  };
  for (const auto& [args, message] : bad) {
    const CliRun r = run_ltx(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
  const CliRun seen = run_ltx(std::string(kEnhance) + "--greedy --image " + image + " --mmproj " + mmproj);
  ASSERT_EQ(seen.code, 0) << seen.output;
  EXPECT_NE(seen.output.find("image seen in"), std::string::npos) << seen.output;

  const std::string generate =
      "generate --prompt \"a red fox\" --enhance-prompt --enhance-max-new-tokens 8 --steps 2 "
      "--image " +
      image + " --output ";
  const CliRun refused = run_ltx(generate + (dir / "no.mp4").string());
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.output.find("no vision tower"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir / "no.mp4"));
  const CliRun made = run_ltx(generate + (dir / "fox.mp4").string() + " --json --mmproj " + mmproj);
  ASSERT_EQ(made.code, 0) << made.output;
  EXPECT_NE(made.output.find("enhanced prompt:"), std::string::npos) << made.output;
  EXPECT_NE(read_all(dir / "fox.json").find("\"text_encoder_mmproj\""), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
