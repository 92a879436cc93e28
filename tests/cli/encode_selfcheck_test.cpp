// `ltx encode` and `ltx selfcheck` through the built binary.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/safetensors.h"
#include "io/test_files.h"
#include "run_ltx.h"
#include "stages/default_model.h"

namespace ltx {
namespace {

// Bad input gets one clear error naming the problem, and no output file appears.
TEST(CliEncode, MissingInputsAreNamedAndNothingIsWritten) {
  test::TempDir dir;
  const std::string out = dir.file("contexts.safetensors");
  CliRun r = run_ltx("encode \"a fox\" --text-encoder " + dir.file("none.gguf") + " --checkpoint " +
                     dir.file("none.safetensors") + " --out " + out);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "none.safetensors")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));

  // A checkpoint without the `config` metadata that configures the text conditioning.
  const std::string ckpt = dir.file("bare.safetensors");
  const std::vector<std::pair<std::string, Tensor>> tensors = {{"w", Tensor::empty(DType::F32, {2})}};
  write_safetensors(ckpt, tensors);
  r = run_ltx("encode \"a fox\" --text-encoder " + dir.file("none.gguf") + " --checkpoint " + ckpt + " --out " + out);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "config")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));

  r = run_ltx("encode --checkpoint " + ckpt + " --out " + out);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "usage: ltx encode")) << r.output;
}

// --unpadded keeps the prompt's own tokens: the last n columns of the left-padded states, the pads before them zero.
TEST(CliEncode, UnpaddedHiddenStatesAreThePromptsOwnColumns) {
  const std::string gguf = stages::find_default_text_encoder();
  if (gguf.empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  test::TempDir dir;
  const std::string common = " \"a red circle\" \"A blue square rises upward.\" --text-encoder " + gguf +
                             " --checkpoint " + stages::ensure_default_model(gguf).path + " --hidden-states --out ";
  ASSERT_EQ(run_ltx("encode" + common + dir.file("padded.safetensors")).code, 0);
  const CliRun r = run_ltx("encode" + common + dir.file("unpadded.safetensors") + " --unpadded");
  ASSERT_EQ(r.code, 0) << r.output;
  const SafetensorsFile padded = SafetensorsFile::open(dir.file("padded.safetensors"));
  const SafetensorsFile unpadded = SafetensorsFile::open(dir.file("unpadded.safetensors"));
  for (const std::string p : {"prompt.0.", "prompt.1."})
    for (const std::string l : {"0", "9", "18"}) {
      const Tensor full = padded.get(p + "hidden_states." + l), own = unpadded.get(p + "hidden_states." + l);
      const int64_t columns = full.dim(1), n = own.dim(1);
      ASSERT_GT(n, 1);
      ASSERT_LT(n, 20);
      EXPECT_EQ(own.to_floats(), full.slice(1, columns - n, columns).contiguous().to_floats()) << p << l;
      for (const float v : full.slice(1, columns - n - 1, columns - n).contiguous().to_floats()) ASSERT_EQ(v, 0.0f);
    }
  const CliRun alone =
      run_ltx("encode \"a\" --text-encoder " + gguf + " --checkpoint " + stages::ensure_default_model(gguf).path +
              " --out " + dir.file("x.safetensors") + " --unpadded");
  EXPECT_EQ(alone.code, 1);
  EXPECT_TRUE(has(alone.output, "--unpadded applies to --hidden-states")) << alone.output;
}

TEST(CliSelfcheck, EveryOpAgreesWithItsReference) {
  const CliRun r = run_ltx("selfcheck");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "0 failed")) << r.output;
}

}  // namespace
}  // namespace ltx
