// `ltx encode` and `ltx selfcheck` through the built binary.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/safetensors.h"
#include "io/test_files.h"
#include "run_ltx.h"

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

TEST(CliSelfcheck, EveryOpAgreesWithItsReference) {
  const CliRun r = run_ltx("selfcheck");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "0 failed")) << r.output;
}

}  // namespace
}  // namespace ltx
