#include "models/gemma3/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gemma_paths.h"
#include "io/safetensors.h"
#include "models/gemma3/tokenizer.h"
#include "verify/components.h"
#include "verify/runner.h"

namespace ltx::gemma3 {
namespace {

const std::string kGolden = std::string(LTX_SOURCE_DIR) + "/tests/golden/text/gemma3_text";

Model tiny_model() {
  return Model::from_hf(kGolden + "/config.json", kGolden + "/weights.safetensors", DType::F32);
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(Gemma3Model, ConfigFromTheGoldenCase) {
  const Config c = Config::from_hf_file(kGolden + "/config.json");
  EXPECT_EQ(c.n_layers, 3);
  ASSERT_EQ(c.layer_types.size(), 3u);
  EXPECT_EQ(c.layer_types[1], LayerType::Full);  // sliding_window_pattern 2
  EXPECT_EQ(c.layer_types[0], LayerType::Sliding);
  EXPECT_EQ(c.rope_linear_factor, 8.0);
  EXPECT_EQ(c.sliding_window, 4);
}

// The golden case through verify's runner, validation tolerances (atol = rtol = 1e-4).
TEST(Gemma3Model, GoldenCasePassesInValidationMode) {
  ComponentRegistry registry;
  register_gemma3_runners(registry);
  for (Precision p : {Precision::Validation, Precision::Production}) {
    const CaseResult r = run_golden_case(kGolden, p, registry);
    EXPECT_EQ(r.status, CaseResult::Status::Passed) << r.error;
    EXPECT_EQ(r.tensors.size(), 9u);  // 4 hidden states + 5 intermediates, every one produced
    for (const auto& t : r.tensors) EXPECT_TRUE(t.ok()) << t.name << " max abs " << t.max_abs;
  }
}

// Real tokens computed alone at their padded positions give the padded computation's hidden states.
TEST(Gemma3Model, RealTokensOnlyEqualThePaddedComputation) {
  Model m = tiny_model();
  // Three prompts of 5, 2 and 7 real tokens left-padded to 16 (a window of 4 makes sliding layers matter).
  const int64_t t = 16;
  const std::vector<int64_t> lengths{5, 2, 7};
  std::vector<int64_t> ids, mask;
  for (size_t r = 0; r < lengths.size(); ++r)
    for (int64_t j = 0; j < t; ++j) {
      const bool real = j >= t - lengths[r];
      ids.push_back(!real ? 0 : j == t - lengths[r] ? 2 : 3 + (7 * j + 11 * static_cast<int64_t>(r)) % 60);
      mask.push_back(real);
    }
  const auto b = static_cast<int64_t>(lengths.size());
  const Tensor ids_t = Tensor::from_ints(DType::I64, {b, t}, ids), mask_t = Tensor::from_ints(DType::I64, {b, t}, mask);
  const Output padded = m.forward_padded(ids_t, mask_t);
  const Output real = m.forward_real_tokens(ids_t, mask_t);
  ASSERT_EQ(real.hidden_states.size(), padded.hidden_states.size());
  const int64_t keep = 7, d = 32;
  ASSERT_EQ(real.hidden_states[0].shape(), (Shape{b, keep, d}));
  float worst = 0;
  for (size_t s = 0; s < padded.hidden_states.size(); ++s)
    for (int64_t r = 0; r < b; ++r) {
      const int64_t len = lengths[static_cast<size_t>(r)];
      const Tensor p = padded.hidden_states[s].slice(0, r, r + 1).slice(1, t - len, t);
      const Tensor q = real.hidden_states[s].slice(0, r, r + 1).slice(1, keep - len, keep);
      worst = std::max(worst, max_abs_diff(p.to_floats(), q.to_floats()));
    }
  EXPECT_LE(worst, 1e-5f);
  // Each prompt alone (batch of one, its own length) gives the same rows as the batched pass.
  for (int64_t r = 0; r < b; ++r) {
    const Output one = m.forward_real_tokens(ids_t.slice(0, r, r + 1), mask_t.slice(0, r, r + 1));
    const int64_t len = lengths[static_cast<size_t>(r)];
    ASSERT_EQ(one.hidden_states[3].dim(1), len);
    EXPECT_LE(max_abs_diff(one.hidden_states[3].to_floats(),
                           real.hidden_states[3].slice(0, r, r + 1).slice(1, keep - len, keep).to_floats()),
              1e-5f);
  }
  // A second call at the same shape reuses the plan.
  const int compiles = m.plans().compiles();
  m.forward_real_tokens(ids_t, mask_t);
  EXPECT_EQ(m.plans().compiles(), compiles);
}

TEST(Gemma3Model, LoaderReportsMissingTensors) {
  // The golden weights under a config with one layer too many: every missing key of layer 3 is named.
  Config c = Config::from_hf_file(kGolden + "/config.json");
  c.n_layers = 4;
  c.layer_types.push_back(LayerType::Sliding);
  const auto src = open_safetensors(kGolden + "/weights.safetensors");
  try {
    Weights::load(c, src, detect_hf_root(*src), DType::F32);
    FAIL() << "loaded a 4-layer model from 3 layers of weights";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("language_model.model.layers.3.self_attn.q_proj.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("language_model.model.layers.3.mlp.down_proj.weight"), std::string::npos) << msg;
  }
}

// The real 270M GGUF against transformers' Gemma-3 on the same dequantized weights in f32
// (tools/reference/make_gemma_real_goldens.py).
TEST(Gemma3Model, Real270mGgufMatchesTransformers) {
  const std::string gguf = testing::real_gguf_path();
  if (gguf.empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const std::string dir = std::string(LTX_SOURCE_DIR) + "/tests/data/gemma3";
  const SafetensorsFile golden = SafetensorsFile::open(dir + "/real_270m.safetensors");
  const Tensor ids = golden.get("input_ids"), mask = golden.get("attention_mask");
  const Tokenizer tok = Tokenizer::from_gguf(gguf);
  const auto& meta = golden.metadata();
  const Json prompts = parse_json(meta.at("prompts"), "real_270m.safetensors prompts");
  const int64_t max_length = std::stoll(meta.at("max_length"));
  const Tokenizer::Batch batch = tok.encode_batch(prompts.get<std::vector<std::string>>(), max_length);
  ASSERT_EQ(batch.ids.to_ints(), ids.to_ints()) << "token ids differ from transformers'";
  ASSERT_EQ(batch.mask.to_ints(), mask.to_ints());

  Model m = Model::from_gguf(gguf, DType::F32);
  const Output out = m.forward_real_tokens(batch.ids, batch.mask);
  const int64_t b = ids.dim(0), t = ids.dim(1), keep = out.hidden_states[0].dim(1);
  const double rtol = std::stod(meta.at("rtol"));
  const std::vector<int64_t> mk = mask.to_ints();
  for (size_t s = 0; s < out.hidden_states.size(); ++s) {
    const Tensor expected = golden.get("hidden_states." + std::to_string(s));  // [B, t, hidden], real rows only
    ASSERT_EQ(expected.dim(1), keep);
    double worst = 0;
    for (int64_t r = 0; r < b; ++r) {
      int64_t len = 0;
      for (int64_t j = 0; j < t; ++j) len += mk[r * t + j];
      const auto e = expected.slice(0, r, r + 1).slice(1, keep - len, keep).to_floats();
      const auto a = out.hidden_states[s].slice(0, r, r + 1).slice(1, keep - len, keep).to_floats();
      double ref = 0;
      for (float v : e) ref = std::max(ref, static_cast<double>(std::abs(v)));
      worst = std::max(worst, static_cast<double>(max_abs_diff(a, e)) / std::max(ref, 1e-6));
    }
    EXPECT_LE(worst, rtol) << "hidden state " << s << ": max |diff| / max |expected| = " << worst;
  }
}

}  // namespace
}  // namespace ltx::gemma3
