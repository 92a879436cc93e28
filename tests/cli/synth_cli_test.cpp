// Runs the built `ltx synth`: its help, a refused request that writes nothing, and a sparse stand-in read back.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/safetensors.h"
#include "io/test_files.h"
#include "run_ltx.h"

namespace ltx {
namespace {

TEST(CliSynth, Help) {
  const CliRun r = run_ltx("synth --help");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "--model NAME")) << r.output;
  EXPECT_TRUE(has(r.output, "gguf-q4_k_m")) << r.output;
}

TEST(CliSynth, RefusedCombinationWritesNothing) {
  test::TempDir dir;
  const std::string out = (dir.path() / "out").string();
  const CliRun r = run_ltx("synth --model gemma-3-12b --format fp8 --out " + out);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "its formats: hf-bf16, gguf-q4_k_m")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(run_ltx("synth --model upsampler-x2 --format bf16 --out " + out + " --layers x").code, 1);
}

TEST(CliSynth, ZerosUpsamplerReadsBack) {
  test::TempDir dir;
  const CliRun r = run_ltx("synth --model upsampler-x2 --format bf16 --zeros --out " + dir.path().string());
  EXPECT_EQ(r.code, 0) << r.output;
  const std::string path = dir.file("ltx-2.3-spatial-upscaler-x2-1.0.safetensors");
  EXPECT_TRUE(has(r.output, path)) << r.output;
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.tensors().size(), 72u);
  EXPECT_EQ(f.info("final_conv.weight").shape, (Shape{128, 1024, 3, 3, 3}));
  EXPECT_TRUE(has(f.metadata().at("config"), "\"mid_channels\":1024"));
}

}  // namespace
}  // namespace ltx
