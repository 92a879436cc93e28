// DiT checkpoint formats (models/ltx/dit_checkpoint.h) on tests/data/dit_formats, made from the tiny DiT goldens by
// tools/reference/make_dit_format_data.py: the Diffusers layout written by diffusers itself, an fp8 checkpoint
// quantized by ltx-core's own fp8 code, and a ComfyUI-GGUF-style GGUF with Q8_0 matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "io/gguf_writer.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "io/test_files.h"
#include "models/ltx/dit/dit.h"
#include "models/ltx/dit/dit_checkpoint.h"
#include "models/ltx/dit/dit_keys.h"

namespace ltx::ltxm {
namespace {

namespace fs = std::filesystem;

const std::string kGolden = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/";
const std::string kData = std::string(LTX_SOURCE_DIR) + "/tests/data/dit_formats/";
// The DiT goldens' validation tolerance (make_dit_goldens.py TOLERANCE): |ours - ref| <= atol + rtol·|ref|.
constexpr double kAtol = 2e-4, kRtol = 2e-4;

DitStreamInput stream(const SafetensorsFile& in, const std::string& s) {
  return {in.get(s + ".latent"),    in.get(s + ".sigma"),   in.get(s + ".timesteps"),
          in.get(s + ".positions"), in.get(s + ".context"), {}};
}

// Runs the checkpoint on a golden case's inputs with ltx-core 1.0.0's A<->V semantics (the goldens').
DitOutput run(DitCheckpoint ckpt, const std::string& inputs_case) {
  ckpt.config.av_semantics = AvTimestepSemantics::OtherSigma;
  Dit dit = Dit::load(ckpt.loader(), ckpt.config, DType::F32, cpu_backend());
  const SafetensorsFile in = SafetensorsFile::open(kGolden + inputs_case + "/inputs.safetensors");
  return dit.run({stream(in, "video"), stream(in, "audio"), {}});
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const auto x = a.to_floats(), y = b.to_floats();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(static_cast<double>(x[i]) - y[i]));
  return m;
}

// The largest |ours - ref| - (atol + rtol·|ref|): <= 0 when every element is within tolerance.
double worst_excess(const Tensor& ours, const Tensor& ref) {
  const auto x = ours.to_floats(), y = ref.to_floats();
  double worst = -1;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(x[i]) - y[i]) - (kAtol + kRtol * std::abs(y[i])));
  return worst;
}

std::string load_error(const DitCheckpoint& ckpt) {
  try {
    Dit::load(ckpt.loader(), ckpt.config, DType::F32, cpu_backend());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---- Diffusers ------------------------------------------------------------------------------------------------

TEST(DitFormats, KeyMapGivesDiffusersOwnNamesForEveryOfficialKey) {
  // Diffusers' converter + save_pretrained wrote these names; our map must produce exactly them, both versions.
  for (const auto& [golden, diffusers] : {std::pair{"ltx2_av", "diffusers_ltx2"}, {"ltx23_av", "diffusers_ltx23"}}) {
    std::set<std::string> mapped;
    for (const std::string& key : open_safetensors(kGolden + golden + "/weights.safetensors")->names()) {
      const std::string official = key.substr(std::string("model.diffusion_model.").size());
      const std::string d = dit_key_to_diffusers(official);
      EXPECT_EQ(dit_key_from_diffusers(d), official);
      mapped.insert(d);
    }
    const auto names = open_safetensors(kData + diffusers + "/transformer")->names();
    EXPECT_EQ(mapped, std::set<std::string>(names.begin(), names.end())) << diffusers;
  }
}

TEST(DitFormats, DiffusersLayoutRunsExactlyAsTheOfficialLayout) {
  for (const auto& [golden, diffusers] : {std::pair{"ltx2_av", "diffusers_ltx2"}, {"ltx23_av", "diffusers_ltx23"}}) {
    // The pipeline folder above transformer/ is accepted too.
    const DitCheckpoint d = open_dit_checkpoint(kData + diffusers);
    ASSERT_EQ(d.layout, DitLayout::Diffusers);
    const DitCheckpoint o = open_dit_checkpoint(kGolden + golden + "/weights.safetensors");
    EXPECT_EQ(d.config.gated_attention, o.config.gated_attention);
    EXPECT_EQ(d.config.cross_attention_adaln, o.config.cross_attention_adaln);
    EXPECT_EQ(d.config.caption_projection, o.config.caption_projection);
    EXPECT_EQ(d.config.av_ca_timestep_scale_multiplier, o.config.av_ca_timestep_scale_multiplier);
    EXPECT_EQ(d.config.rope_mode, o.config.rope_mode);
    EXPECT_EQ(d.config.float64_grid, o.config.float64_grid);
    EXPECT_EQ(d.config.max_pos, o.config.max_pos);
    const DitOutput a = run(d, golden), b = run(o, golden);
    EXPECT_EQ(max_abs_diff(a.video_velocity, b.video_velocity), 0.0) << golden;
    EXPECT_EQ(max_abs_diff(a.audio_velocity, b.audio_velocity), 0.0) << golden;
    const SafetensorsFile expected = SafetensorsFile::open(kGolden + golden + "/expected.safetensors");
    EXPECT_LE(worst_excess(a.video_velocity, expected.get("video.velocity")), 0) << golden;
    EXPECT_LE(worst_excess(a.audio_velocity, expected.get("audio.velocity")), 0) << golden;
  }
}

// A copy of the Diffusers folder with config.json edited.
std::string diffusers_copy(const std::string& name, const std::function<void(Json&)>& edit) {
  const fs::path src = kData + "diffusers_ltx23/transformer";
  const fs::path dst = fs::path(testing::TempDir()) / ("ltx_dit_formats_" + name);
  fs::remove_all(dst);
  fs::create_directories(dst);
  for (const auto& e : fs::directory_iterator(src)) fs::copy_file(e.path(), dst / e.path().filename());
  std::ifstream in(src / "config.json");
  Json config = Json::parse(in);
  edit(config);
  std::ofstream(dst / "config.json") << config.dump(2);
  return dst.string();
}

TEST(DitFormats, DiffusersErrorListsEveryProblemByDiffusersNames) {
  const std::string more = diffusers_copy("more", [](Json& c) {
    c["num_layers"] = 3;
    c["cross_attention_dim"] = 64;
  });
  std::string msg = load_error(open_dit_checkpoint(more));
  EXPECT_NE(msg.find("Diffusers layout"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("transformer_blocks.2.video_a2v_cross_attn_scale_shift_table"), std::string::npos) << msg;
  EXPECT_NE(msg.find("transformer_blocks.2.attn1.norm_q"), std::string::npos) << msg;
  EXPECT_NE(msg.find("wrong shape"), std::string::npos) << msg;
  EXPECT_NE(msg.find("transformer_blocks.0.attn2.to_k.weight: expected [32, 64]"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("scale_shift_table_a2v_ca"), std::string::npos) << "official names leaked: " << msg;

  const std::string fewer = diffusers_copy("fewer", [](Json& c) { c["num_layers"] = 1; });
  msg = load_error(open_dit_checkpoint(fewer));
  EXPECT_NE(msg.find("unexpected"), std::string::npos) << msg;
  EXPECT_NE(msg.find("transformer_blocks.1.audio_a2v_cross_attn_scale_shift_table"), std::string::npos) << msg;
  EXPECT_NE(msg.find("transformer_blocks.1.audio_attn1.norm_k.weight"), std::string::npos) << msg;
  fs::remove_all(more);
  fs::remove_all(fewer);
}

TEST(DitFormats, DiffusersConfigChoicesWithoutAnOfficialCounterpartAreRefused) {
  Json c = {{"_class_name", "LTX2VideoTransformer3DModel"}, {"patch_size", 2}, {"gated_attn", true}};
  try {
    DitConfig::from_diffusers(c);
    FAIL() << "patch_size 2 must be refused";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("patch_size is 2, expected 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("audio_gated_attn is false, expected true"), std::string::npos) << msg;
  }
  EXPECT_THROW(DitConfig::from_diffusers(Json{{"_class_name", "FluxTransformer2DModel"}}), Error);
}

// ---- fp8 ------------------------------------------------------------------------------------------------------

TEST(DitFormats, Fp8CheckpointStaysOneBytePerWeightAndMatchesTheReference) {
  const DitCheckpoint c = open_dit_checkpoint(kData + "fp8_ltx23.safetensors");
  Dit dit = Dit::load(c.loader(), c.config, DType::F32, cpu_backend());
  // ltx-core's fp8 policy skips block 0 (and 43-47); block 1 is quantized.
  const nn::Linear& q = dit.weights().blocks[1].video->attn1.to_q;
  EXPECT_EQ(q.weight.dtype(), DType::F8_E4M3);
  EXPECT_EQ(q.weight.nbytes(), static_cast<size_t>(q.weight.numel()));
  EXPECT_NE(q.weight_scale, 1.0f);
  EXPECT_EQ(dit.weights().blocks[0].video->attn1.to_q.weight.dtype(), DType::F32);
  int64_t f8_bytes = 0, f8_params = 0;
  for (const auto& b : dit.weights().blocks)
    for (const auto* s : {&*b.video, &*b.audio})
      for (const nn::Linear* l :
           {&s->attn1.to_q, &s->attn1.to_k, &s->attn1.to_v, &s->attn1.to_out, &s->ff.proj_in, &s->ff.proj_out})
        if (l->weight.dtype() == DType::F8_E4M3) {
          f8_bytes += static_cast<int64_t>(l->weight.nbytes());
          f8_params += l->weight.numel();
        }
  EXPECT_GT(f8_params, 0);
  EXPECT_EQ(f8_bytes, f8_params);

  const DitOutput out = run(c, "ltx23_av");
  const SafetensorsFile ref = SafetensorsFile::open(kData + "fp8_ltx23_expected.safetensors");
  EXPECT_LE(worst_excess(out.video_velocity, ref.get("video.velocity")), 0);
  EXPECT_LE(worst_excess(out.audio_velocity, ref.get("audio.velocity")), 0);
}

// ---- GGUF -----------------------------------------------------------------------------------------------------

TEST(DitFormats, GgufDitKeepsQ8_0ResidentAndMatchesTheReference) {
  const DitCheckpoint c = open_dit_checkpoint(kData + "gguf_ltx23.gguf");
  ASSERT_EQ(c.layout, DitLayout::Gguf);
  EXPECT_EQ(c.root, "");
  EXPECT_EQ(c.config.n_layers, 2);
  EXPECT_TRUE(c.config.gated_attention);
  Dit dit = Dit::load(c.loader(), c.config, DType::F32, cpu_backend());
  // ff.net.0.proj [128, 32]: Q8_0 blocks of 32 -> 34 bytes, resident as stored (no f32 copy).
  const nn::Linear& ff = dit.weights().blocks[0].video->ff.proj_in;
  EXPECT_EQ(ff.weight.dtype(), DType::Q8_0);
  EXPECT_EQ(ff.weight.nbytes(), static_cast<size_t>(ff.weight.numel() / 32 * 34));
  int64_t q_bytes = 0, q_params = 0;
  for (const auto& b : dit.weights().blocks)
    for (const auto* s : {&*b.video, &*b.audio})
      for (const nn::Linear* l : {&s->attn1.to_q, &s->attn2.to_q, &s->ff.proj_in, &s->ff.proj_out})
        if (l->weight.dtype() == DType::Q8_0) {
          q_bytes += static_cast<int64_t>(l->weight.nbytes());
          q_params += l->weight.numel();
        }
  EXPECT_GT(q_params, 0);
  EXPECT_EQ(q_bytes, q_params / 32 * 34);

  const DitOutput out = run(c, "ltx23_av");
  const SafetensorsFile ref = SafetensorsFile::open(kData + "gguf_ltx23_expected.safetensors");
  EXPECT_LE(worst_excess(out.video_velocity, ref.get("video.velocity")), 0);
  EXPECT_LE(worst_excess(out.audio_velocity, ref.get("audio.velocity")), 0);
}

// A GGUF of the transformer alone that carries no `config` string (converters before ComfyUI-GGUF's PR #399) and no
// --dit-config: named before anything loads, with the three accepted forms of a configuration.
TEST(DitFormats, GgufWithoutConfigAsksForOne) {
  test::TempDir dir;
  test::GGUFWriter w;
  w.add_string("general.architecture", "ltxv");
  w.add_tensor("patchify_proj.weight", {4, 4}, 0, std::string(16 * 4, '\0'));  // f32
  test::write_bytes(dir.file("no_config.gguf"), w.build());
  test::expect_error([&] { open_dit_checkpoint(dir.file("no_config.gguf")); },
                     {"no_config.gguf", "carries no `config` entry", "--dit-config", "Diffusers config.json"});
}

TEST(DitFormats, ConfigFileOverridesAndAcceptsEveryForm) {
  const std::string gguf = kData + "gguf_ltx23.gguf";
  // The official checkpoint (its metadata), a Diffusers config.json, a config JSON: all give the same model.
  for (const std::string& config :
       {kGolden + "ltx23_av/weights.safetensors", kData + "diffusers_ltx23/transformer/config.json"}) {
    const DitCheckpoint c = open_dit_checkpoint(gguf, DitModelType::AudioVideo, config);
    EXPECT_EQ(c.config.n_layers, 2) << config;
    EXPECT_TRUE(c.config.cross_attention_adaln) << config;
    EXPECT_EQ(c.config.av_ca_timestep_scale_multiplier, 1000.0f) << config;
  }
  EXPECT_THROW(open_dit_checkpoint(gguf, DitModelType::AudioVideo, kData + "missing.json"), Error);
  EXPECT_THROW(open_dit_checkpoint(kData + "no_such.gguf"), Error);
  EXPECT_THROW(open_dit_checkpoint(kData), Error);  // a folder that is no Diffusers transformer
}

}  // namespace
}  // namespace ltx::ltxm
