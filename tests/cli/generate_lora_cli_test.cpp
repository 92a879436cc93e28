// `ltx generate` with LoRAs and other DiT files, on the tiny one-stage golden checkpoint: a LoRA with keys that
// name no layer fails before any denoising, listing them, and leaves no output; with --lora-allow-partial it runs
// and prints the layers fused. A DiT-only file given as --checkpoint is refused naming the missing parts, a --dit of
// another model is refused; --dit naming the checkpoint itself reproduces the plain run byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli_files.h"
#include "io/safetensors.h"
#include "nn/weight_source.h"
#include "run_ltx.h"
#include "stages/lora_weights.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/pipeline/t2v_audio_one_stage/";
const std::string kTiny = "--checkpoint " + kCase + "weights.safetensors --text-embeddings " + kCase +
                          "inputs.safetensors --frames 9 --height 64 --width 96 --steps 2 --stg-blocks 1 ";

fs::path temp_dir(const std::string& name) { return fresh_temp_dir("ltx_generate_lora_", name); }

// Rank-1 pairs for the checkpoint's first two DiT layers, plus one pair for a block the tiny model lacks.
std::string write_lora(const fs::path& dir) {
  const auto source = open_safetensors(kCase + "weights.safetensors");
  const ltxm::LoraTargets targets = stages::checkpoint_lora_targets(*source, "model.diffusion_model.");
  std::vector<std::pair<std::string, Tensor>> t;
  for (size_t i = 0; i < 2; ++i) {
    const std::string& m = targets.modules.at(i);
    const auto [out, in] = targets.shape(m);
    t.emplace_back("diffusion_model." + m + ".lora_A.weight",
                   Tensor::from_floats(DType::F32, {1, in}, std::vector<float>(static_cast<size_t>(in), 0.01f)));
    t.emplace_back("diffusion_model." + m + ".lora_B.weight",
                   Tensor::from_floats(DType::F32, {out, 1}, std::vector<float>(static_cast<size_t>(out), 0.02f)));
  }
  t.emplace_back("diffusion_model.transformer_blocks.99.attn1.to_q.lora_A.weight", t[0].second);
  t.emplace_back("diffusion_model.transformer_blocks.99.attn1.to_q.lora_B.weight", t[1].second);
  const std::string path = (dir / "tiny_lora.safetensors").string();
  write_safetensors(path, t);
  return path;
}

TEST(GenerateLoraCli, UnmatchedKeysFailBeforeDenoisingUnlessPartial) {
  const fs::path dir = temp_dir("partial");
  const std::string lora = write_lora(dir);
  const fs::path out = dir / "out.mp4";
  CliRun r = run_ltx("generate " + kTiny + "--progress json --lora " + lora + ":0.8 -o " + out.string());
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.output, "2 keys name no Linear")) << r.output;
  EXPECT_TRUE(has(r.output, "transformer_blocks.99.attn1.to_q.lora_A.weight")) << r.output;
  EXPECT_TRUE(has(r.output, "--lora-allow-partial")) << r.output;
  EXPECT_FALSE(has(r.output, "\"denoise\"")) << r.output;
  EXPECT_FALSE(fs::exists(out));

  r = run_ltx("generate " + kTiny + "--lora " + lora + ":0.8 --lora-allow-partial -o " + out.string());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "2 layers, official naming; 2 keys matched no layer and were skipped")) << r.output;
  EXPECT_TRUE(has(r.output, "stage-1 weights: 2 layers fused")) << r.output;
  EXPECT_TRUE(fs::exists(out));

  // The LoRA changes the result; without it the run differs.
  const fs::path plain = dir / "plain.mp4";
  r = run_ltx("generate " + kTiny + "-o " + plain.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(read_all(out), read_all(plain));
  fs::remove_all(dir);
}

TEST(GenerateLoraCli, DitFilesBesideTheCheckpoint) {
  const fs::path dir = temp_dir("dit");
  const fs::path a = dir / "a.mp4", b = dir / "b.mp4", bad = dir / "bad.mp4";
  CliRun r = run_ltx("generate " + kTiny + "-o " + a.string());
  ASSERT_EQ(r.code, 0) << r.output;
  r = run_ltx("generate " + kTiny + "--dit " + kCase + "weights.safetensors -o " + b.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_all(a), read_all(b));

  const std::string diffusers = std::string(LTX_SOURCE_DIR) + "/tests/data/dit_formats/diffusers_ltx23";
  r = run_ltx("generate --checkpoint " + diffusers + " --text-embeddings " + kCase +
              "inputs.safetensors --frames 9 --height 64 --width 96 -o " + bad.string());
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.output, "is a DiT only")) << r.output;
  EXPECT_TRUE(has(r.output, "as --dit")) << r.output;
  // A DiT-only official file as --checkpoint: the missing parts named.
  const std::string dit_only = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/ltx23_av/weights.safetensors";
  r = run_ltx("generate --checkpoint " + dit_only + " --text-embeddings " + kCase +
              "inputs.safetensors --frames 9 --height 64 --width 96 -o " + bad.string());
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.output, "lacks the video VAE (vae.*), the audio VAE (audio_vae.*), the vocoder (vocoder.*)"))
      << r.output;
  // A GGUF DiT of another model beside this checkpoint: refused before it is loaded.
  const std::string gguf = std::string(LTX_SOURCE_DIR) + "/tests/data/dit_formats/gguf_ltx23.gguf";
  r = run_ltx("generate " + kTiny + "--dit " + gguf + " -o " + bad.string());
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.output, "must be the same model")) << r.output;
  r = run_ltx("generate " + kTiny + "--dit-config " + kCase + "weights.safetensors -o " + bad.string());
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.output, "--dit-config needs --dit")) << r.output;
  r = run_ltx("generate " + kTiny + "--distilled-lora " + kCase + "weights.safetensors -o " + bad.string());
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.output, "it needs --two-stage")) << r.output;
  EXPECT_FALSE(fs::exists(bad));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
