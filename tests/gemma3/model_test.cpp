#include "models/gemma3/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "gemma_paths.h"
#include "io/safetensors.h"
#include "models/gemma3/tokenizer.h"
#include "verify/components.h"
#include "verify/runner.h"

namespace ltx::gemma3 {
namespace {

const std::string kGolden = std::string(LTX_SOURCE_DIR) + "/tests/golden/text/gemma3_text";

Model tiny_model() {
  return Model::from_hf(kGolden + "/config.json", kGolden + "/weights.safetensors", DType::F32, cpu_backend());
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

// Worst max |a - e| / max |e| over consecutive row groups (one group per prompt) of two [n, k] row sets.
double worst_relative(const std::vector<float>& a, const std::vector<float>& e, int64_t k,
                      const std::vector<int64_t>& group_rows) {
  double worst = 0;
  size_t row = 0;
  for (int64_t n : group_rows) {
    double diff = 0, ref = 0;
    for (size_t i = row * k; i < (row + n) * k; ++i) {
      diff = std::max(diff, std::abs(static_cast<double>(a[i]) - e[i]));
      ref = std::max(ref, std::abs(static_cast<double>(e[i])));
    }
    worst = std::max(worst, diff / std::max(ref, 1e-30));
    row += static_cast<size_t>(n);
  }
  return worst;
}

// The real 270M GGUF against transformers' Gemma-3 on the same dequantized weights in f32, padded to 1024 as LTX
// runs it (tools/reference/make_gemma_real_goldens.py); the engine computes real tokens only.
TEST(Gemma3Model, Real270mGgufMatchesTransformers) {
  const std::string gguf = testing::real_gguf_path();
  if (gguf.empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const SafetensorsFile golden =
      SafetensorsFile::open(std::string(LTX_SOURCE_DIR) + "/tests/data/gemma3/real_270m.safetensors");
  const auto& meta = golden.metadata();
  const auto prompts = parse_json(meta.at("prompts"), "prompts").get<std::vector<std::string>>();
  const int64_t n_short = std::stoll(meta.at("n_short_prompts")), max_length = std::stoll(meta.at("max_length"));
  const double rtol = std::stod(meta.at("rtol"));
  const auto full_states = parse_json(meta.at("full_states"), "full_states").get<std::vector<int>>();

  const Tokenizer tok = Tokenizer::from_gguf(gguf);
  const Tokenizer::Batch batch = tok.encode_batch(prompts, max_length);
  ASSERT_EQ(batch.ids.to_ints(), golden.get("input_ids").to_ints()) << "token ids differ from transformers'";
  ASSERT_EQ(batch.mask.to_ints(), golden.get("attention_mask").to_ints());

  Model m = Model::from_gguf(gguf, DType::F32, cpu_backend());
  const int64_t b = batch.ids.dim(0), d = m.config().hidden_size;
  std::vector<int64_t> lengths;
  const std::vector<int64_t> mk = batch.mask.to_ints();
  for (int64_t r = 0; r < b; ++r)
    lengths.push_back(std::count(mk.begin() + r * max_length, mk.begin() + (r + 1) * max_length, 1));
  // The short prompts in one batch, the long one (past the sliding window) alone.
  const Output shorts = m.forward_real_tokens(batch.ids.slice(0, 0, n_short), batch.mask.slice(0, 0, n_short));
  const Output longs = m.forward_real_tokens(batch.ids.slice(0, n_short, b), batch.mask.slice(0, n_short, b));
  const auto real_rows = [&](const Output& o, size_t s, int64_t first, int64_t count) {
    std::vector<float> rows;
    const Tensor& h = o.hidden_states[s];  // [count, keep, d]
    for (int64_t r = 0; r < count; ++r) {
      const auto v =
          h.slice(0, r, r + 1).slice(1, h.dim(1) - lengths[static_cast<size_t>(first + r)], h.dim(1)).to_floats();
      rows.insert(rows.end(), v.begin(), v.end());
    }
    return rows;
  };
  const std::vector<float> proj = golden.get("projection").to_floats();  // [d, P]
  const int64_t p = golden.get("projection").dim(1);
  double worst_proj = 0, worst_full = 0, worst_row = 0;
  for (size_t s = 0; s < shorts.hidden_states.size(); ++s) {
    std::vector<float> rows = real_rows(shorts, s, 0, n_short);
    const std::vector<float> long_rows = real_rows(longs, s, n_short, b - n_short);
    rows.insert(rows.end(), long_rows.begin(), long_rows.end());
    const int64_t n = static_cast<int64_t>(rows.size()) / d;
    std::vector<float> ours(static_cast<size_t>(n * p));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < p; ++k) {
        double acc = 0;
        for (int64_t j = 0; j < d; ++j) acc += static_cast<double>(rows[i * d + j]) * proj[j * p + k];
        ours[i * p + k] = static_cast<float>(acc);
      }
    const double w = worst_relative(ours, golden.get("proj." + std::to_string(s)).to_floats(), p, lengths);
    EXPECT_LE(w, rtol) << "hidden state " << s << " (projected): relative error " << w;
    worst_proj = std::max(worst_proj, w);
    if (std::find(full_states.begin(), full_states.end(), static_cast<int>(s)) != full_states.end()) {
      const std::vector<int64_t> short_lengths(lengths.begin(), lengths.begin() + n_short);
      const std::vector<float> ours_full(
          rows.begin(), rows.begin() + std::accumulate(short_lengths.begin(), short_lengths.end(), int64_t{0}) * d);
      const double wf =
          worst_relative(ours_full, golden.get("hidden_states." + std::to_string(s)).to_floats(), d, short_lengths);
      EXPECT_LE(wf, rtol) << "hidden state " << s << ": relative error " << wf;
      worst_full = std::max(worst_full, wf);
      // Per token as well (Gemma has a few huge activations that could hide an error in an ordinary row).
      const std::vector<int64_t> ones(ours_full.size() / static_cast<size_t>(d), 1);
      const double wr =
          worst_relative(ours_full, golden.get("hidden_states." + std::to_string(s)).to_floats(), d, ones);
      EXPECT_LE(wr, 10 * rtol) << "hidden state " << s << ": per-token relative error " << wr;
      worst_row = std::max(worst_row, wr);
    }
  }
  std::printf(
      "real 270M: worst max|diff|/max|ref| over 19 hidden states: projected %.3g, full rows %.3g, "
      "per token %.3g\n",
      worst_proj, worst_full, worst_row);
}

}  // namespace
}  // namespace ltx::gemma3
