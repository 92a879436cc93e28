// Runs the built `ltx` binary: inspect on safetensors and GGUF files, compare on pairs of safetensors files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "io/gguf_writer.h"
#include "io/safetensors.h"
#include "io/test_files.h"
#include "run_ltx.h"

namespace ltx {
namespace {

TEST(CliInspect, Safetensors) {
  test::TempDir dir;
  const std::string path = dir.file("m.safetensors");
  const std::vector<std::pair<std::string, Tensor>> tensors = {{"blocks.0.w", Tensor::empty(DType::BF16, {4, 3})},
                                                               {"ids", Tensor::empty(DType::I64, {7})}};
  write_safetensors(path, tensors, {{"config", std::string(1000, 'x')}, {"format", "pt"}});
  const CliRun r = run_ltx("inspect " + path);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "blocks.0.w bf16 [4, 3]")) << r.output;
  EXPECT_TRUE(has(r.output, "ids i64 [7]")) << r.output;
  EXPECT_TRUE(has(r.output, "format = pt")) << r.output;
  EXPECT_TRUE(has(r.output, "... (1000 chars)")) << r.output;  // long values are summarised
  EXPECT_FALSE(has(r.output, std::string(200, 'x'))) << r.output;
}

TEST(CliInspect, GGUF) {
  test::GGUFWriter w;
  w.add_string("general.architecture", "gemma3");
  std::vector<std::string> tokens;
  for (int i = 0; i < 1000; ++i) tokens.push_back("t" + std::to_string(i));
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_tensor("token_embd.weight", {32, 3}, 8, std::string(3 * 34, '\0'));
  w.add_tensor("blk.0.attn_q.weight", {32, 2}, 7, std::string(2 * 24, '\0'));  // q5_1: not supported
  test::TempDir dir;
  const std::string path = dir.file("m.gguf");
  test::write_bytes(path, w.build());
  const CliRun r = run_ltx("inspect " + path);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "GGUF v3")) << r.output;
  EXPECT_TRUE(has(r.output, "general.architecture: string = \"gemma3\"")) << r.output;
  EXPECT_TRUE(has(r.output, "[string x 1000] \"t0\", \"t1\"")) << r.output;
  EXPECT_FALSE(has(r.output, "\"t999\"")) << r.output;
  EXPECT_TRUE(has(r.output, "token_embd.weight q8_0 [3, 32]")) << r.output;
  EXPECT_TRUE(has(r.output, "blk.0.attn_q.weight q5_1 (unsupported) [2, 32]")) << r.output;
}

TEST(CliInspect, BadFileExitsOneWithTheError) {
  test::TempDir dir;
  const std::string path = dir.file("junk.safetensors");
  test::write_bytes(path, "abc");
  const CliRun r = run_ltx("inspect " + path);
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.output, path) && has(r.output, "shorter than")) << r.output;
  EXPECT_EQ(run_ltx("inspect").code, 1);
}

class CliCompare : public ::testing::Test {
 protected:
  std::string write(const std::string& name, std::vector<std::pair<std::string, Tensor>> tensors) {
    const std::string path = dir_.file(name);
    write_safetensors(path, tensors);
    return path;
  }
  test::TempDir dir_;
};

TEST_F(CliCompare, PassWithinTolerance) {
  const auto a = write("a.safetensors", {{"x", Tensor::from_floats(DType::F32, {2}, {1.0f, 2.0f})}});
  const auto b = write("b.safetensors", {{"x", Tensor::from_floats(DType::F32, {2}, {1.0f, 2.0001f})}});
  CliRun r = run_ltx("compare " + a + " " + b);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "OK      x f32[2]")) << r.output;
  EXPECT_TRUE(has(r.output, "PASS: 1 ok, 0 failed, 0 missing in B, 0 extra in B")) << r.output;
  // The same pair fails once the tolerances are tightened.
  r = run_ltx("compare " + a + " " + b + " --atol 1e-6 --rtol 0");
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "FAIL    x f32[2]") && has(r.output, "1 of 2 elements outside tolerance")) << r.output;
}

TEST_F(CliCompare, MissingExtraAndShapeMismatch) {
  const auto a =
      write("a.safetensors", {{"gone", Tensor::empty(DType::F32, {1})}, {"both", Tensor::empty(DType::F32, {2, 2})}});
  const auto b =
      write("b.safetensors", {{"new", Tensor::empty(DType::F32, {1})}, {"both", Tensor::empty(DType::F32, {4})}});
  const CliRun r = run_ltx("compare " + a + " " + b);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "MISSING gone f32[1]: not in B")) << r.output;
  EXPECT_TRUE(has(r.output, "EXTRA   new f32[1]: only in B")) << r.output;
  EXPECT_TRUE(has(r.output, "FAIL    both: shape mismatch, A f32[2, 2] vs B f32[4]")) << r.output;
  EXPECT_TRUE(has(r.output, "FAIL: 0 ok, 1 failed, 1 missing in B, 1 extra in B")) << r.output;
}

TEST_F(CliCompare, BadArguments) {
  const auto a = write("a.safetensors", {{"x", Tensor::empty(DType::F32, {1})}});
  EXPECT_TRUE(has(run_ltx("compare " + a).output, "usage: ltx compare"));
  const CliRun r = run_ltx("compare " + a + " " + a + " --atol abc");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.output, "--atol needs a non-negative number, got 'abc'")) << r.output;
  EXPECT_TRUE(has(run_ltx("compare " + a + " " + a + " --bogus").output, "unexpected argument '--bogus'"));
  EXPECT_TRUE(has(run_ltx("compare " + a + " " + dir_.file("none")).output, "cannot open"));
}

}  // namespace
}  // namespace ltx
