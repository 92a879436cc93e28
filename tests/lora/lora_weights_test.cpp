// The weight sets of a generation (stages/lora_weights.h) on the golden case tests/golden/dit/lora_official: stage 1
// = base + --lora, stage 2 = base + --lora + --distilled-lora, switching back is exact; LoRA files checked against a
// checkpoint's layer list before any DiT is loaded; and fusion into fp8 weights with a per-tensor scale
// (tests/data/dit_formats/fp8_ltx23.safetensors, quantized by ltx-core's own fp8 code) and into GGUF Q8_0 ones.
#include "stages/lora_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "io/safetensors.h"
#include "io/test_files.h"
#include "models/ltx/dit/dit_checkpoint.h"

namespace ltx::stages {
namespace {

const std::string kCase = std::string(LTX_SOURCE_DIR) + "/tests/golden/dit/lora_official/weights.safetensors";
const std::string kFp8 = std::string(LTX_SOURCE_DIR) + "/tests/data/dit_formats/fp8_ltx23.safetensors";
const std::string kPrefix = "model.diffusion_model.";

ltxm::Dit load_dit(const std::shared_ptr<WeightSource>& s) {
  const Json cfg = Json::parse(s->metadata().at("config")).at("transformer");
  return ltxm::Dit::load(WeightLoader(s, kPrefix), ltxm::DitConfig::from_metadata(cfg, ltxm::DitModelType::AudioVideo),
                         DType::BF16, cpu_backend());
}

// The golden's LoRA (stored under "lora.") written out as an official-naming file.
std::string write_golden_lora(const test::TempDir& dir, const WeightSource& s, const std::string& name) {
  std::vector<std::pair<std::string, Tensor>> t;
  for (const auto& k : s.names())
    if (k.rfind("lora.diffusion_model.", 0) == 0) t.emplace_back(k.substr(5), s.get(k));
  write_safetensors(dir.file(name), t);
  return dir.file(name);
}

std::vector<uint16_t> bits(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = c.data<uint16_t>();
  return {p, p + c.numel()};
}

// The resident weights of every layer after a plain fuser applies these (file, strength) pairs to a fresh DiT.
std::map<std::string, std::vector<uint16_t>> reference_set(const std::vector<std::pair<std::string, float>>& loras) {
  const auto source = open_safetensors(kCase);
  ltxm::Dit dit = load_dit(source);
  ltxm::DitLoraFuser fuser(dit, source, DType::BF16);
  std::vector<ltxm::LoraAdapter> adapters;
  for (const auto& [path, strength] : loras) adapters.push_back(ltxm::read_lora(path, fuser.targets(), false));
  std::vector<ltxm::WeightedLora> set;
  for (size_t i = 0; i < loras.size(); ++i) set.push_back({&adapters[i], loras[i].second});
  fuser.apply(set);
  std::map<std::string, std::vector<uint16_t>> out;
  for (const auto& m : fuser.targets().modules) out[m] = bits(fuser.weight(m));
  return out;
}

std::map<std::string, std::vector<uint16_t>> current(const LoraWeights& w, const ltxm::LoraTargets& targets) {
  std::map<std::string, std::vector<uint16_t>> out;
  for (const auto& m : targets.modules) out[m] = bits(w.weight(m));
  return out;
}

TEST(LoraWeights, StagesSwitchBetweenExactSets) {
  test::TempDir dir;
  const auto source = open_safetensors(kCase);
  const std::string user = write_golden_lora(dir, *source, "user.safetensors");
  const std::string distilled = write_golden_lora(dir, *source, "distilled.safetensors");
  const auto stage1 = reference_set({{user, 0.5f}});
  const auto stage2 = reference_set({{user, 0.5f}, {distilled, -1.25f}});
  const auto base = reference_set({});
  ASSERT_NE(stage1, base);
  ASSERT_NE(stage2, stage1);

  ltxm::Dit dit = load_dit(source);
  std::vector<std::string> lines;
  const ltxm::LoraTargets targets = checkpoint_lora_targets(*source, kPrefix);
  LoraWeights w(dit, source, DType::BF16, {{{user, 0.5f}}, ltxm::LoraSpec{distilled, -1.25f}, false},
                [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(current(w, targets), stage1);
  int64_t touched = 0;
  for (const auto& [m, v] : stage1) touched += v != base.at(m);
  EXPECT_EQ(w.layers_fused(), touched);
  w.use_stage2();
  EXPECT_EQ(current(w, targets), stage2);
  w.use_stage1();
  EXPECT_EQ(current(w, targets), stage1);
  ASSERT_GE(lines.size(), 4u);  // two files, then stage-1, stage-2, stage-1 fusions
  const std::string n = std::to_string(touched);
  EXPECT_NE(lines[0].find(n + " layers, official naming"), std::string::npos) << lines[0];
  EXPECT_NE(lines[2].find("stage-1 weights: " + n + " layers fused"), std::string::npos) << lines[2];
}

// Fused copies of every touched matrix within a quarter of the budget, else unfused: the resident weights stay the
// checkpoint's and the stages switch the updates beside the layers.
TEST(LoraWeights, UnfusedWhenFusedCopiesExceedAQuarterOfTheBudget) {
  test::TempDir dir;
  const auto source = open_safetensors(kCase);
  const std::string user = write_golden_lora(dir, *source, "user.safetensors");
  const ltxm::LoraTargets targets = checkpoint_lora_targets(*source, kPrefix);
  LoraRequest request{{{user, 0.5f}}, std::nullopt, false};
  const std::vector<ltxm::LoraAdapter> adapters = read_loras(request, targets);
  size_t copies = 0;
  for (const auto& layer : adapters[0].layers) {
    const auto [n_out, n_in] = targets.shape(layer.target);
    copies += static_cast<size_t>(n_out * n_in) * 2;  // bf16
  }
  request.memory_budget_bytes = copies * 4;
  EXPECT_EQ(choose_lora_application(request, adapters, targets, DType::BF16), ltxm::LoraApplication::Fused);
  request.memory_budget_bytes = copies * 4 - 1;
  EXPECT_EQ(choose_lora_application(request, adapters, targets, DType::BF16), ltxm::LoraApplication::Unfused);
  request.application = ltxm::LoraApplication::Fused;
  EXPECT_EQ(choose_lora_application(request, adapters, targets, DType::BF16), ltxm::LoraApplication::Fused);

  request.application.reset();
  const auto base = reference_set({});
  ltxm::Dit dit = load_dit(source);
  std::vector<std::string> lines;
  LoraWeights w(dit, source, DType::BF16, request, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(w.application(), ltxm::LoraApplication::Unfused);
  EXPECT_EQ(current(w, targets), base);
  EXPECT_EQ(w.layers_fused(), static_cast<int64_t>(adapters[0].layers.size()));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[1].find("with an unfused LoRA update"), std::string::npos) << lines[1];
}

// The checkpoint's own listing of Linears equals the loaded DiT's, so a LoRA can be checked before loading.
TEST(LoraWeights, CheckpointTargetsAreTheDitsLinears) {
  const auto source = open_safetensors(kCase);
  const ltxm::LoraTargets listed = checkpoint_lora_targets(*source, kPrefix);
  ltxm::Dit dit = load_dit(source);
  const ltxm::DitLoraFuser fuser(dit, source, DType::BF16);
  const std::set<std::string> a(listed.modules.begin(), listed.modules.end());
  const std::set<std::string> b(fuser.targets().modules.begin(), fuser.targets().modules.end());
  EXPECT_EQ(a, b);
  for (const auto& m : b) EXPECT_EQ(listed.shape(m), fuser.targets().shape(m)) << m;
}

// A LoRA on one quantized layer of `path`: fused into its dequantized (and, for fp8, scaled) value, kept in the
// compute dtype (bf16, so the delta is rounded to bf16 first, as ltx-core rounds it) with scale 1; switching back
// restores the stored bytes and their scale.
void check_quantized_fusion(const std::string& path, const std::string& module, DType stored_dtype) {
  const ltxm::DitCheckpoint c = ltxm::open_dit_checkpoint(path);
  ltxm::Dit dit = ltxm::Dit::load(c.loader(), c.config, DType::BF16, cpu_backend());
  ltxm::DitLoraFuser fuser(dit, c.weights, DType::BF16, c.root);
  const Tensor stored = c.weights->get(c.root + module + ".weight");
  ASSERT_EQ(stored.dtype(), stored_dtype);
  const std::string scale_key = c.root + module + ".weight_scale";
  const float scale = c.weights->contains(scale_key) ? c.weights->get(scale_key).to_floats().at(0) : 1.0f;
  if (stored_dtype == DType::F8_E4M3) ASSERT_NE(scale, 1.0f);
  ASSERT_EQ(fuser.weight_scale(module), scale);

  const int64_t n_out = stored.dim(0), n_in = stored.dim(1), rank = 2;
  std::vector<float> a(static_cast<size_t>(rank * n_in)), b(static_cast<size_t>(n_out * rank));
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.05f * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * std::cos(0.23f * static_cast<float>(i));
  test::TempDir dir;
  const std::vector<std::pair<std::string, Tensor>> t = {
      {"diffusion_model." + module + ".lora_A.weight", Tensor::from_floats(DType::F32, {rank, n_in}, a)},
      {"diffusion_model." + module + ".lora_B.weight", Tensor::from_floats(DType::F32, {n_out, rank}, b)}};
  write_safetensors(dir.file("q.safetensors"), t);
  const ltxm::LoraAdapter adapter = ltxm::read_lora(dir.file("q.safetensors"), fuser.targets(), false);
  const ltxm::WeightedLora w{&adapter, 0.7f};
  EXPECT_EQ(fuser.apply({&w, 1}).layers_fused, 1);

  const Tensor& fused = fuser.weight(module);
  EXPECT_EQ(fused.dtype(), DType::BF16);
  EXPECT_EQ(fuser.weight_scale(module), 1.0f);
  const std::vector<float> wq = stored.to(DType::F32).to_floats(), got = fused.to(DType::F32).to_floats();
  double worst = 0.0;
  for (int64_t o = 0; o < n_out; ++o)
    for (int64_t i = 0; i < n_in; ++i) {
      float d = 0.0f;
      for (int64_t k = 0; k < rank; ++k) d += b[o * rank + k] * a[k * n_in + i];
      const float delta = 0.7f * d, want = wq[o * n_in + i] * scale + delta;
      // Two bf16 roundings, as ltx-core's for a bf16 model: the delta's and the sum's, each at most half a bf16
      // step, 2^-8 of its value.
      const double bound = (std::abs(delta) + std::abs(want)) * std::ldexp(1.0, -8) + 1e-30;
      worst = std::max(worst, std::abs(got[o * n_in + i] - want) / bound);
    }
  EXPECT_LE(worst, 1.0) << "worst error in units of the two roundings' bound";

  EXPECT_EQ(fuser.apply({}).layers_restored, 1);
  EXPECT_EQ(fuser.weight(module).dtype(), stored_dtype);
  EXPECT_EQ(fuser.weight_scale(module), scale);
  const Tensor back = fuser.weight(module).contiguous();
  const Tensor orig = stored.contiguous();
  ASSERT_EQ(back.nbytes(), orig.nbytes());
  EXPECT_EQ(std::memcmp(back.data<uint8_t>(), orig.data<uint8_t>(), orig.nbytes()), 0);
}

// fp8 (ltx-core's own quantization; it skips block 0, so block 1 is fp8) with its per-tensor weight_scale.
TEST(LoraWeights, Fp8WeightsFuseIntoTheirScaledValueAndRestore) {
  check_quantized_fusion(kFp8, "transformer_blocks.1.attn1.to_q", DType::F8_E4M3);
}

// GGUF Q8_0 (gguf-py's quantization).
TEST(LoraWeights, GgufQ8WeightsFuseDequantizedAndRestore) {
  check_quantized_fusion(std::string(LTX_SOURCE_DIR) + "/tests/data/dit_formats/gguf_ltx23.gguf",
                         "transformer_blocks.0.ff.net.0.proj", DType::Q8_0);
}

}  // namespace
}  // namespace ltx::stages
