// LoRA files and fusion on the golden case tests/golden/dit/lora_official (a one-block LTX-2.3-style DiT and a
// rank-2 official-naming LoRA on every Linear; the fused model against ltx-core is checked by `ltx verify`).
// Here: the other namings give the same fused weights, unmatched keys fail, switching weight sets is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/safetensors.h"
#include "io/test_files.h"
#include "models/ltx/dit/dit_keys.h"
#include "models/ltx/dit/lora_fuse.h"

namespace ltx::ltxm {
namespace {

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/lora_official/weights.safetensors";
const std::string kPrefix = "model.diffusion_model.";

struct Loaded {
  std::shared_ptr<WeightSource> source = open_safetensors(kCase);
  Dit dit = load(source);
  DitLoraFuser fuser{dit, source, DType::BF16};

  static Dit load(const std::shared_ptr<WeightSource>& s) {
    const Json cfg = Json::parse(s->metadata().at("config")).at("transformer");
    DitConfig c = DitConfig::from_metadata(cfg, DitModelType::AudioVideo);
    c.av_semantics = AvTimestepSemantics::OtherSigma;  // ltx-core 1.0.0, which made the case (as the dit runner)
    return Dit::load(WeightLoader(s, kPrefix), c, DType::BF16, cpu_backend());
  }
};

// The golden's LoRA as (official module, A, B) triples.
struct Pair {
  std::string module;
  Tensor a, b;
};
std::vector<Pair> official_pairs(const WeightSource& s) {
  std::vector<Pair> out;
  const std::string head = "lora.diffusion_model.", tail = ".lora_A.weight";
  for (const auto& k : s.names()) {
    if (k.rfind(head, 0) != 0 || k.size() < tail.size() || k.compare(k.size() - tail.size(), tail.size(), tail))
      continue;
    const std::string module = k.substr(head.size(), k.size() - head.size() - tail.size());
    out.push_back({module, s.get(k), s.get(head + module + ".lora_B.weight")});
  }
  return out;
}

std::vector<uint16_t> bits(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = c.data<uint16_t>();
  return {p, p + c.numel()};
}

std::map<std::string, std::vector<uint16_t>> fused_with(const std::string& path, float strength, bool partial = false) {
  Loaded m;
  const LoraAdapter a = read_lora(path, m.fuser.targets(), partial);
  const WeightedLora w{&a, strength};
  m.fuser.apply({&w, 1});
  std::map<std::string, std::vector<uint16_t>> out;
  for (const auto& module : m.fuser.targets().modules) out[module] = bits(m.fuser.weight(module));
  return out;
}

TEST(LoraSpec, PathAndStrength) {
  EXPECT_EQ(parse_lora_spec("a.safetensors").path, "a.safetensors");
  EXPECT_EQ(parse_lora_spec("a.safetensors").strength, 1.0f);
  EXPECT_EQ(parse_lora_spec("dir/a.safetensors:0.6").path, "dir/a.safetensors");
  EXPECT_FLOAT_EQ(parse_lora_spec("dir/a.safetensors:0.6").strength, 0.6f);
  EXPECT_FLOAT_EQ(parse_lora_spec("a:b.safetensors:-1.5").strength, -1.5f);
  EXPECT_EQ(parse_lora_spec("odd:name.safetensors").path, "odd:name.safetensors");  // not a number: part of the path
}

// Diffusers' LTX2VideoTransformer3DModel names of one module per family (typed from diffusers 0.42.1
// transformer_ltx2.py and lora_conversion_utils.py, not computed).
TEST(LoraNames, DiffusersNamesOfEveryFamily) {
  const std::pair<const char*, const char*> table[] = {
      {"patchify_proj", "proj_in"},
      {"audio_patchify_proj", "audio_proj_in"},
      {"adaln_single.emb.timestep_embedder.linear_1", "time_embed.emb.timestep_embedder.linear_1"},
      {"audio_adaln_single.linear", "audio_time_embed.linear"},
      {"prompt_adaln_single.linear", "prompt_adaln.linear"},
      {"audio_prompt_adaln_single.linear", "audio_prompt_adaln.linear"},
      {"av_ca_video_scale_shift_adaln_single.linear", "av_cross_attn_video_scale_shift.linear"},
      {"av_ca_audio_scale_shift_adaln_single.linear", "av_cross_attn_audio_scale_shift.linear"},
      {"av_ca_a2v_gate_adaln_single.linear", "av_cross_attn_video_a2v_gate.linear"},
      {"av_ca_v2a_gate_adaln_single.linear", "av_cross_attn_audio_v2a_gate.linear"},
      {"transformer_blocks.3.attn1.to_q", "transformer_blocks.3.attn1.to_q"},
      {"transformer_blocks.3.audio_attn2.to_gate_logits", "transformer_blocks.3.audio_attn2.to_gate_logits"},
      {"transformer_blocks.3.audio_to_video_attn.to_out.0", "transformer_blocks.3.audio_to_video_attn.to_out.0"},
      {"transformer_blocks.3.ff.net.0.proj", "transformer_blocks.3.ff.net.0.proj"},
      {"caption_projection.linear_2", "caption_projection.linear_2"},
      {"audio_proj_out", "audio_proj_out"},
  };
  for (const auto& [official, diffusers] : table) {
    EXPECT_EQ(dit_key_to_diffusers(official), diffusers) << official;
    EXPECT_EQ(dit_key_from_diffusers(diffusers), official) << diffusers;
  }
}

// The golden LoRA covers every Linear of the model, and fusing it changes each of them.
TEST(LoraFuse, OfficialFileCoversEveryLayer) {
  Loaded m;
  const LoraAdapter a = read_lora(*m.source, m.fuser.targets(), false, "lora.");
  EXPECT_EQ(a.naming, "official");
  EXPECT_EQ(a.layers.size(), m.fuser.targets().modules.size());
  const WeightedLora w{&a, 0.75f};
  const LoraFuseReport r = m.fuser.apply({&w, 1});
  EXPECT_EQ(r.layers_fused, static_cast<int64_t>(a.layers.size()));
  for (const auto& module : m.fuser.targets().modules)
    EXPECT_NE(bits(m.fuser.weight(module)), bits(m.source->get(kPrefix + module + ".weight").to(DType::BF16)))
        << module;
}

// ComfyUI (lora_down/lora_up with alpha), kohya-flattened and Diffusers files of the same LoRA fuse to the same
// bits as the official file. The alpha files store B·2 with alpha = rank/2, so alpha/rank undoes the factor.
TEST(LoraFuse, EveryNamingFusesIdentically) {
  test::TempDir dir;
  const auto source = open_safetensors(kCase);
  const auto pairs = official_pairs(*source);
  ASSERT_FALSE(pairs.empty());
  using Entries = std::vector<std::pair<std::string, Tensor>>;
  Entries official, comfy, kohya, diffusers;
  for (const auto& p : pairs) {
    std::string flat = p.module;
    for (char& c : flat)
      if (c == '.') c = '_';
    const int64_t rank = p.a.dim(0);
    std::vector<float> b2 = p.b.to(DType::F32).to_floats();
    for (float& v : b2) v *= 2.0f;
    const Tensor doubled = Tensor::from_floats(DType::F32, p.b.shape(), b2);
    const Tensor alpha = Tensor::from_floats(DType::F32, {}, {static_cast<float>(rank) / 2.0f});
    official.push_back({"diffusion_model." + p.module + ".lora_A.weight", p.a});
    official.push_back({"diffusion_model." + p.module + ".lora_B.weight", p.b});
    comfy.push_back({"diffusion_model." + p.module + ".lora_down.weight", p.a});
    comfy.push_back({"diffusion_model." + p.module + ".lora_up.weight", doubled});
    comfy.push_back({"diffusion_model." + p.module + ".alpha", alpha});
    kohya.push_back({"lora_unet_" + flat + ".lora_down.weight", p.a});
    kohya.push_back({"lora_unet_" + flat + ".lora_up.weight", p.b});
    diffusers.push_back({"transformer." + dit_key_to_diffusers(p.module) + ".lora_A.weight", p.a});
    diffusers.push_back({"transformer." + dit_key_to_diffusers(p.module) + ".lora_B.weight", p.b});
  }
  write_safetensors(dir.file("official.safetensors"), official);
  write_safetensors(dir.file("comfy.safetensors"), comfy);
  write_safetensors(dir.file("kohya.safetensors"), kohya);
  write_safetensors(dir.file("diffusers.safetensors"), diffusers);
  const auto expected = fused_with(dir.file("official.safetensors"), 0.75f);
  EXPECT_EQ(fused_with(dir.file("comfy.safetensors"), 0.75f), expected);
  EXPECT_EQ(fused_with(dir.file("kohya.safetensors"), 0.75f), expected);
  EXPECT_EQ(fused_with(dir.file("diffusers.safetensors"), 0.75f), expected);
}

TEST(LoraFuse, UnmatchedKeysAreListedUnlessPartial) {
  test::TempDir dir;
  const auto source = open_safetensors(kCase);
  const auto pairs = official_pairs(*source);
  std::vector<std::pair<std::string, Tensor>> t = {
      {"diffusion_model." + pairs[0].module + ".lora_A.weight", pairs[0].a},
      {"diffusion_model." + pairs[0].module + ".lora_B.weight", pairs[0].b},
      {"diffusion_model.transformer_blocks.7.attn1.to_q.lora_A.weight", pairs[0].a},
      {"diffusion_model.transformer_blocks.7.attn1.to_q.lora_B.weight", pairs[0].b},
      {"diffusion_model.video_embeddings_connector.transformer_1d_blocks.0.attn1.to_q.lora_A.weight", pairs[0].a},
  };
  write_safetensors(dir.file("l.safetensors"), t);
  Loaded m;
  test::expect_error([&] { read_lora(dir.file("l.safetensors"), m.fuser.targets(), false); },
                     {"2 keys name no Linear", "transformer_blocks.7.attn1.to_q.lora_A.weight",
                      "transformer_blocks.7.attn1.to_q.lora_B.weight", "--lora-allow-partial"});
  const LoraAdapter a = read_lora(dir.file("l.safetensors"), m.fuser.targets(), true);
  EXPECT_EQ(a.layers.size(), 1u);
  EXPECT_EQ(a.unmatched.size(), 2u);
  ASSERT_EQ(a.not_applied.size(), 1u);  // the connector: ltx-core leaves it alone too
}

TEST(LoraFuse, BadPairsAreNamed) {
  test::TempDir dir;
  const auto source = open_safetensors(kCase);
  const auto pairs = official_pairs(*source);
  std::vector<std::pair<std::string, Tensor>> t = {
      {"diffusion_model." + pairs[0].module + ".lora_A.weight", pairs[0].a},
      {"diffusion_model." + pairs[1].module + ".lora_A.weight", pairs[1].a.transpose(0, 1).contiguous()},
      {"diffusion_model." + pairs[1].module + ".lora_B.weight", pairs[1].b},
  };
  write_safetensors(dir.file("bad.safetensors"), t);
  Loaded m;
  test::expect_error([&] { read_lora(dir.file("bad.safetensors"), m.fuser.targets(), false); },
                     {pairs[0].module + ": has A/down but not B/up", pairs[1].module + ": A [", "do not fit"});
  test::expect_error([&] { read_lora(dir.file("missing.safetensors"), m.fuser.targets(), false); },
                     {"missing.safetensors"});
}

// A LoRA of the other model version is named as such, even with --lora-allow-partial: LTX-2.3's gated attention
// layers on an LTX-2 DiT (here: the case's targets without them), and LTX-2's 6-row AdaLN on an LTX-2.3 DiT.
TEST(LoraFuse, ALoraOfTheOtherVersionIsNamed) {
  Loaded m;
  const LoraTargets& all = m.fuser.targets();
  LoraTargets ltx2 = all;
  std::erase_if(ltx2.modules, [](const std::string& module) { return module.ends_with(".to_gate_logits"); });
  ASSERT_LT(ltx2.modules.size(), all.modules.size()) << "the case is LTX-2.3-style: it has gated attention";
  for (bool partial : {false, true})
    test::expect_error([&] { read_lora(*m.source, ltx2, partial, "lora."); },
                       {"made for LTX-2.3 and the DiT is LTX-2", "to_gate_logits", "... and"});

  test::TempDir dir;
  const auto pairs = official_pairs(*m.source);
  const auto adaln =
      std::find_if(pairs.begin(), pairs.end(), [](const Pair& p) { return p.module == "adaln_single.linear"; });
  ASSERT_NE(adaln, pairs.end());
  const int64_t rows = adaln->b.shape()[0], rank = adaln->b.shape()[1];
  ASSERT_EQ(rows % 9, 0);
  const Tensor six_rows = adaln->b.slice(0, 0, rows / 9 * 6).contiguous();  // LTX-2: 6 AdaLN rows per block
  ASSERT_EQ(six_rows.shape()[1], rank);
  write_safetensors(dir.file("ltx2.safetensors"), std::vector<std::pair<std::string, Tensor>>{
                                                      {"diffusion_model.adaln_single.linear.lora_A.weight", adaln->a},
                                                      {"diffusion_model.adaln_single.linear.lora_B.weight", six_rows}});
  test::expect_error([&] { read_lora(dir.file("ltx2.safetensors"), all, true); },
                     {"made for LTX-2 and the DiT is LTX-2.3", "adaln_single.linear", "do not fit"});
}

// Against ltx-core (make_lora_goldens.py): the fused weights bit for bit; the fused model's outputs within the
// DiT's production tolerance (bf16 resident weights take the DiT's production path; measured max 1.2e-3). `ltx verify`
// runs the same case through the dit_lora runner.
// The DiT call of the golden case; its outputs against ltx-core's fused model within the DiT's production tolerance.
void expect_golden_outputs(Dit& dit) {
  const std::string dir = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/lora_official/";
  const SafetensorsFile expected = SafetensorsFile::open(dir + "expected.safetensors");
  const SafetensorsFile in = SafetensorsFile::open(dir + "inputs.safetensors");
  DitCall call;
  for (const char* stream : {"video", "audio"}) {
    DitStreamInput s;
    const std::string p = stream;
    s.latent = in.get(p + ".latent");
    s.sigma = in.get(p + ".sigma");
    s.timesteps = in.get(p + ".timesteps");
    s.positions = in.get(p + ".positions");
    s.context = in.get(p + ".context");
    (p == "video" ? call.video : call.audio) = s;
  }
  const DitOutput out = dit.run(call);
  const std::pair<const char*, const Tensor*> outputs[] = {{"video.velocity", &out.video_velocity},
                                                           {"video.denoised", &out.video_denoised},
                                                           {"audio.velocity", &out.audio_velocity},
                                                           {"audio.denoised", &out.audio_denoised}};
  for (const auto& [name, t] : outputs) {
    const auto got = t->to_floats(), want = expected.get(name).to_floats();
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(std::abs(got[i] - want[i]), 8e-2f + 8e-2f * std::abs(want[i])) << name << "[" << i << "]";
  }
}

TEST(LoraFuse, MatchesLtxCore) {
  const std::string dir = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/lora_official/";
  Loaded m;
  const LoraAdapter a = read_lora(*m.source, m.fuser.targets(), false, "lora.");
  const WeightedLora w{&a, 0.75f};
  m.fuser.apply({&w, 1});
  const SafetensorsFile expected = SafetensorsFile::open(dir + "expected.safetensors");
  int compared = 0;
  for (const auto& info : expected.tensors()) {
    if (info.name.rfind("fused.", 0) != 0) continue;
    const std::string module = info.name.substr(6, info.name.size() - 6 - 7);  // without ".weight"
    EXPECT_EQ(m.fuser.weight(module).to(DType::F32).to_floats(), expected.get(info.name).to_floats()) << module;
    ++compared;
  }
  EXPECT_EQ(compared, 13);
  expect_golden_outputs(m.dit);
}

// Unfused, the LoRA runs beside each layer: the resident weights stay the checkpoint's bits, the outputs match
// ltx-core's fused model as closely as the fused path does, and restoring clears every update.
TEST(LoraFuse, UnfusedMatchesLtxCoreAndLeavesTheWeights) {
  Loaded m;
  std::map<std::string, std::vector<uint16_t>> before;
  for (const auto& module : m.fuser.targets().modules) before[module] = bits(m.fuser.weight(module));
  m.fuser.set_application(LoraApplication::Unfused);
  const LoraAdapter a = read_lora(*m.source, m.fuser.targets(), false, "lora.");
  const WeightedLora w{&a, 0.75f};
  const LoraFuseReport r = m.fuser.apply({&w, 1});
  EXPECT_EQ(r.layers_fused, static_cast<int64_t>(a.layers.size()));
  for (const auto& module : m.fuser.targets().modules)
    EXPECT_EQ(bits(m.fuser.weight(module)), before.at(module)) << module;
  const nn::Linear& q = m.dit.weights().blocks[0].video->attn1.to_q;
  ASSERT_EQ(q.low_rank.size(), 1u);
  EXPECT_FLOAT_EQ(q.low_rank[0].scale, 0.75f * a.layers[0].scale);
  expect_golden_outputs(m.dit);
  EXPECT_THROW(m.fuser.set_application(LoraApplication::Fused), Error);  // not once applied

  const LoraFuseReport back = m.fuser.apply({});
  EXPECT_EQ(back.layers_restored, static_cast<int64_t>(a.layers.size()));
  EXPECT_TRUE(q.low_rank.empty());
}

// Two adapters sum in f32 and round once; removing them gives back exactly the checkpoint's weights; applying the
// same set again does nothing.
TEST(LoraFuse, SwitchingSetsIsExact) {
  Loaded m;
  const LoraAdapter a = read_lora(*m.source, m.fuser.targets(), false, "lora.");
  const WeightedLora both[] = {{&a, 0.5f}, {&a, -1.25f}};
  m.fuser.apply(both);
  const std::string module = "transformer_blocks.0.ff.net.0.proj";
  const auto pair = std::find_if(a.layers.begin(), a.layers.end(), [&](const auto& l) { return l.target == module; });
  ASSERT_NE(pair, a.layers.end());
  const Tensor base = m.source->get(kPrefix + module + ".weight").to(DType::F32);
  const auto w = base.to_floats(), da = pair->down.to(DType::F32).to_floats(), ub = pair->up.to(DType::F32).to_floats();
  const int64_t n_out = base.dim(0), n_in = base.dim(1), rank = pair->down.dim(0);
  std::vector<float> want(w.size());
  for (int64_t o = 0; o < n_out; ++o)
    for (int64_t i = 0; i < n_in; ++i) {
      float d = 0.0f;
      for (int64_t k = 0; k < rank; ++k) d += ub[o * rank + k] * da[k * n_in + i];
      want[o * n_in + i] = w[o * n_in + i] + (0.5f - 1.25f) * d;
    }
  EXPECT_EQ(bits(m.fuser.weight(module)), bits(Tensor::from_floats(DType::F32, base.shape(), want).to(DType::BF16)));

  const LoraFuseReport again = m.fuser.apply(both);
  EXPECT_EQ(again.layers_fused + again.layers_restored, 0);
  const LoraFuseReport off = m.fuser.apply({});
  EXPECT_EQ(off.layers_restored, static_cast<int64_t>(a.layers.size()));
  for (const auto& mod : m.fuser.targets().modules)
    EXPECT_EQ(bits(m.fuser.weight(mod)), bits(m.source->get(kPrefix + mod + ".weight").to(DType::BF16))) << mod;
}

}  // namespace
}  // namespace ltx::ltxm
