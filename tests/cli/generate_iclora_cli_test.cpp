// `ltx generate --lora IC-LORA --video FILE [--conditioning-mask FILE --conditioning-strength S]` on the embedded
// default model, with a control clip and a grey mask clip FFmpeg makes (17 frames) and a rank-1 IC-LoRA written here
// (metadata reference_downscale_factor 2): the MP4 has the requested frames; the mask and the reference change the
// result; the sidecar records the inputs; bad inputs are refused before any denoising with nothing written. The flow
// itself is compared with the reference in tests/golden/pipeline/ic_lora.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli_files.h"
#include "io/safetensors.h"
#include "nn/weight_source.h"
#include "run_ltx.h"
#include "scoped_env.h"
#include "stages/default_model.h"
#include "stages/lora_weights.h"

namespace ltx {
namespace {

namespace fs = std::filesystem;

// `frames` frames at 24 fps of an FFmpeg source filter (`source` = testsrc, gradients, ...), 80x64, H.264.
bool make_clip(const fs::path& mp4, const std::string& source, int frames, const std::string& filter = "") {
  const std::string seconds = std::to_string((frames - 0.5) / 24.0);
  const std::string cmd = "ffmpeg -v error -y -f lavfi -i " + source + "=size=80x64:rate=24:duration=" + seconds +
                          (filter.empty() ? "" : " -vf " + filter) + " -c:v libx264 -pix_fmt yuv420p " + mp4.string() +
                          " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 && fs::exists(mp4);
}

// Rank-1 pairs on the default DiT's first two self-attention queries; with `factor`, the IC-LoRA metadata.
std::string write_lora(const fs::path& path, const std::string& checkpoint, const std::string& factor) {
  const auto source = open_safetensors(checkpoint);
  const ltxm::LoraTargets targets = stages::checkpoint_lora_targets(*source, "model.diffusion_model.");
  std::vector<std::pair<std::string, Tensor>> t;
  for (const char* m : {"transformer_blocks.0.attn1.to_q", "transformer_blocks.1.attn1.to_q"}) {
    const auto [out, in] = targets.shape(m);
    t.emplace_back(std::string("diffusion_model.") + m + ".lora_A.weight",
                   Tensor::from_floats(DType::F32, {1, in}, std::vector<float>(static_cast<size_t>(in), 0.05f)));
    t.emplace_back(std::string("diffusion_model.") + m + ".lora_B.weight",
                   Tensor::from_floats(DType::F32, {out, 1}, std::vector<float>(static_cast<size_t>(out), 0.05f)));
  }
  std::map<std::string, std::string> metadata;
  if (!factor.empty()) metadata["reference_downscale_factor"] = factor;
  write_safetensors(path.string(), t, metadata);
  return path.string();
}

TEST(GenerateIcLoraCli, RunsWithReferenceAndMaskAndRefusesBadInputs) {
  const std::string gemma = stages::find_default_text_encoder();
  if (gemma.empty()) GTEST_SKIP() << stages::default_text_encoder_missing_message();
  const fs::path dir = fresh_temp_dir("ltx_generate_iclora_cli_", "run");
  const ScopedEnv cache("LTX_CACHE_DIR", (dir / "cache").string());
  const fs::path control = dir / "control.mp4", mask = dir / "mask.mp4", short_mask = dir / "short_mask.mp4";
  const fs::path short_control = dir / "short_control.mp4", wide_mask = dir / "wide_mask.mp4";
  if (!make_clip(control, "testsrc", 17) || !make_clip(mask, "gradients", 17, "format=gray") ||
      !make_clip(short_mask, "gradients", 4, "format=gray") || !make_clip(short_control, "testsrc", 12) ||
      !make_clip(wide_mask, "gradients", 17, "format=gray,scale=160:64"))
    GTEST_SKIP() << "the ffmpeg command is absent (scripts/setup installs Debian's ffmpeg)";
  const std::string checkpoint = stages::ensure_default_model(gemma).path;
  const std::string ic = write_lora(dir / "ic.safetensors", checkpoint, "2");
  const std::string plain = write_lora(dir / "plain.safetensors", checkpoint, "");
  auto run = [&](const std::string& name, const std::string& args) {
    return run_ltx("generate --prompt \"a red fox\" --quiet " + args + " --output " + (dir / (name + ".mp4")).string());
  };
  const std::string reference = "--lora " + ic + " --video " + control.string() + " ";
  CliRun r = run("masked", reference + "--conditioning-mask " + mask.string() + " --conditioning-strength 0.5 --json");
  ASSERT_EQ(r.code, 0) << r.output;
  const int frames = count_video_frames(dir / "masked.mp4");
  if (frames >= 0) EXPECT_EQ(frames, 17);
  const std::string sidecar = read_all(dir / "masked.json");
  EXPECT_NE(sidecar.find("\"conditioning_strength\": 0.5"), std::string::npos) << sidecar;
  EXPECT_NE(sidecar.find("control.mp4"), std::string::npos) << sidecar;
  r = run("unmasked", reference);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(read_all(dir / "masked.mp4"), read_all(dir / "unmasked.mp4"));  // the attention mask acts
  r = run("weak", reference + "--video-strength 0.5");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(read_all(dir / "weak.mp4"), read_all(dir / "unmasked.mp4"));  // the reference's denoise strength acts

  // A 12-frame reference under 17 frames: read whole, its frames past 9 dropped before the encoder (2 latent frames).
  r = run("short", "--lora " + ic + " --video " + short_control.string());
  EXPECT_EQ(r.code, 0) << r.output;

  const fs::path empty = dir / "empty.mp4";
  { std::ofstream touch(empty); }
  const std::pair<std::string, std::string> bad[] = {
      {"--video " + control.string(), "need the IC-LoRA"},
      {"--lora " + ic, "is an IC-LoRA"},
      {"--lora " + plain + " --video " + (dir / "nope.mp4").string(), "does not exist"},
      {reference.substr(0, reference.find("--video")) + "--video " + empty.string(), "empty.mp4"},
      {"--conditioning-mask " + mask.string(), "conditioning_mask needs reference_videos"},
      {reference + "--conditioning-mask " + short_mask.string(), "the mask needs 1 + k*2 frames"},
      {reference + "--conditioning-strength 1.5", "conditioning_strength must be in [0, 1]"},
      {reference + "--audio " + control.string(), "do not combine with an audio input"},
      {reference + "--width 160", "must be multiples of 32"},
      {reference + "--conditioning-mask " + wide_mask.string(), "the mask needs the reference's aspect ratio"},
  };
  for (const auto& [args, message] : bad) {
    r = run("bad", args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("denoise"), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir / "bad.mp4")) << args;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
