// PromptEncoder below the tokenizer, on the tiny text goldens (tools/reference/tiny_configs.py sizes them to fit:
// Gemma hidden 32 with 4 hidden states -> feature extractor -> 128-register connectors): Gemma on the real tokens
// only gives the contexts of the reference's all-positions computation, and the feature extractor + connectors
// plan is compiled once for every prompt of the padded shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "nn/weight_source.h"
#include "stages/text_encoder.h"

namespace ltx::stages {
namespace {

const std::string kText = std::string(LTX_SOURCE_DIR) + "/tests/golden/text/";
constexpr int64_t kMaxLength = 128;  // a multiple of the connectors' 128 registers

std::unique_ptr<PromptEncoder> tiny_encoder(const std::string& version) {
  gemma3::Model gemma = gemma3::Model::from_hf(kText + "gemma3_text/config.json",
                                               kText + "gemma3_text/weights.safetensors", DType::F32, cpu_backend());
  // The feature extractor and connector cases together hold the keys of one checkpoint, with the same `config`.
  const auto source =
      open_safetensors(std::vector<std::string>{kText + "feature_extractor_" + version + "/weights.safetensors",
                                                kText + "connectors_" + version + "/weights.safetensors"});
  const Json tc = metadata_json(*source, "config").at("transformer");
  return PromptEncoder::from_model(std::move(gemma), source, tc, DType::F32, kMaxLength);
}

// A left-padded [1, kMaxLength] prompt of `len` tokens: <bos> (2), then ids in 3..63 of the 64-token vocabulary.
std::pair<Tensor, Tensor> prompt(int64_t len, int64_t seed) {
  std::vector<int64_t> ids(kMaxLength, 0), mask(kMaxLength, 0);
  for (int64_t j = kMaxLength - len; j < kMaxLength; ++j) {
    ids[j] = j == kMaxLength - len ? 2 : 3 + (7 * j + 13 * seed) % 61;
    mask[j] = 1;
  }
  return {Tensor::from_ints(DType::I64, {1, kMaxLength}, ids), Tensor::from_ints(DType::I64, {1, kMaxLength}, mask)};
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<float> x = a.to_floats(), y = b.to_floats();
  float m = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

float max_abs(const Tensor& a) {
  float m = 0;
  for (float v : a.to_floats()) m = std::max(m, std::abs(v));
  return m;
}

class PromptEncoderTest : public ::testing::TestWithParam<std::string> {};

// One feature-extractor + connectors plan per column bucket (PromptEncoder::stack_states): here 64 columns (40
// tokens), 128 (the padded path: max_length), 32 (3 and 9 tokens).
TEST_P(PromptEncoderTest, RealTokensGiveThePaddedContextsAndCompileOncePerColumnBucket) {
  auto enc = tiny_encoder(GetParam());
  // Long before short, so the second prompt's pad columns held the first one's real tokens in the reused buffers.
  const int64_t lengths[] = {40, 3, 9, 40};
  std::vector<Tensor> videos;
  for (size_t k = 0; k < std::size(lengths); ++k) {
    const int64_t len = lengths[k];
    const auto [ids, mask] = prompt(len, static_cast<int64_t>(k));
    const PromptContexts real = enc->encode_ids(ids, mask, /*keep_hidden_states=*/true, /*real_tokens=*/true);
    const PromptContexts padded = enc->encode_ids(ids, mask, true, /*real_tokens=*/false);
    EXPECT_EQ(enc->plans().compiles(), k == 0 ? 2 : 3) << "prompt " << k << " of " << len << " tokens";

    ASSERT_EQ(real.video.shape(), (Shape{1, kMaxLength, real.video.dim(2)}));
    EXPECT_GT(max_abs(real.video), 1e-3f);
    EXPECT_LE(max_abs_diff(real.video, padded.video), 1e-5f) << "video, " << len << " tokens";
    EXPECT_LE(max_abs_diff(real.audio, padded.audio), 1e-5f) << "audio, " << len << " tokens";

    // Hidden states: the real tokens' equal the padded computation's; pad rows are zeros.
    ASSERT_EQ(real.hidden_states.size(), padded.hidden_states.size());
    for (size_t s = 0; s < real.hidden_states.size(); ++s) {
      ASSERT_EQ(real.hidden_states[s].shape(), padded.hidden_states[s].shape());
      EXPECT_LE(max_abs_diff(real.hidden_states[s].slice(1, kMaxLength - len, kMaxLength),
                             padded.hidden_states[s].slice(1, kMaxLength - len, kMaxLength)),
                1e-5f)
          << "hidden state " << s << ", " << len << " tokens";
      EXPECT_EQ(max_abs(real.hidden_states[s].slice(1, 0, kMaxLength - len)), 0.0f) << "hidden state " << s;
    }
    videos.push_back(real.video);
  }
  EXPECT_GT(max_abs_diff(videos[0], videos[1]), 1e-3f);  // different prompts, different contexts
  EXPECT_EQ(enc->plans().compiles(), 3);
  EXPECT_EQ(enc->plans().hits(), 2 * static_cast<int>(std::size(lengths)) - 3);
}

TEST(PromptEncoder, WithoutTokenizerEncodeThrowsAndIdsMustBeMaxLength) {
  auto enc = tiny_encoder("v1");
  EXPECT_ANY_THROW(enc->encode("a cat"));
  const Tensor ids = Tensor::from_ints(DType::I64, {1, 4}, std::vector<int64_t>{0, 0, 2, 5});
  const Tensor mask = Tensor::from_ints(DType::I64, {1, 4}, std::vector<int64_t>{0, 0, 1, 1});
  EXPECT_ANY_THROW(enc->encode_ids(ids, mask));
}

INSTANTIATE_TEST_SUITE_P(FeatureExtractors, PromptEncoderTest, ::testing::Values("v1", "v2"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ltx::stages
