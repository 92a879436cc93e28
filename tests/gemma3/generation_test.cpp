// Gemma 3 as a generator on the real 270M GGUF against transformers (tests/data/gemma3/greedy_270m.json, made by
// tools/reference/make_gemma_generation_goldens.py): greedy tokens equal token for token from plain prompts (one of
// 589 tokens, longer than the 512-token sliding window) and from chat prompts right-padded to a multiple of 8 as
// ltx-core's _enhance pads them; the prefill's top logits agree; the chat prompt's ids equal transformers' rendering of
// Gemma 3's template; the KV-cache path gives the logits a one-shot prefill gives, chunk by chunk; the built-in
// enhancement instructions make the model answer in words.
#include "models/gemma3/generation.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>

#include "gemma_paths.h"
#include "io/json.h"
#include "models/gemma3/tokenizer.h"
#include "stages/prompt_enhancer.h"

namespace ltx::gemma3 {
namespace {

Json golden() {
  std::ifstream f(std::string(LTX_SOURCE_DIR) + "/tests/data/gemma3/greedy_270m.json");
  return Json::parse(f);
}

std::vector<int32_t> ints(const Json& j) { return j.get<std::vector<int32_t>>(); }

struct RealModel {
  Tokenizer tokenizer;
  Model model;
};

RealModel& real_model() {
  static RealModel m{Tokenizer::from_gguf(testing::real_gguf_path()),
                     Model::from_gguf(testing::real_gguf_path(), DType::F32, cpu_backend())};
  return m;
}

GenerationOptions greedy(int64_t n) {
  GenerationOptions o;
  o.sampling.greedy = true;
  o.max_new_tokens = n;
  o.stop_ids = {1, 106};
  return o;
}

TEST(Gemma3Generation, GreedyEqualsTransformersFromPlainPrompts) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Json g = golden();  // held: a range-for over golden().at(...) would read a destroyed temporary
  for (const Json& c : g.at("cases")) {
    std::vector<int32_t> want = ints(c.at("greedy"));
    const PromptTokens prompt = right_padded_prompt(ints(c.at("ids")), 1, 0);
    // Each f32 step reads the 670 MB f32 head; 32 tokens per prompt keep the test short (the golden holds 64).
    want.resize(std::min<size_t>(want.size(), 32));
    const GenerationResult r = generate(real_model().model, prompt, greedy(static_cast<int64_t>(want.size())));
    EXPECT_EQ(r.tokens, want) << "prompt of " << prompt.ids.size() << " tokens";
  }
}

TEST(Gemma3Generation, PrefillLogitsAgreeWithTransformers) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Json g = golden();  // held: a range-for over golden().at(...) would read a destroyed temporary
  for (const Json& c : g.at("cases")) {
    const PromptTokens p = right_padded_prompt(ints(c.at("ids")), 1, 0);
    KvCache cache;
    const std::vector<float> logits = real_model().model.extend(cache, p.ids, p.positions, p.valid);
    const std::vector<int32_t> ids = ints(c.at("prefill_top8_ids"));
    const std::vector<float> values = c.at("prefill_top8_logits").get<std::vector<float>>();
    for (size_t k = 0; k < ids.size(); ++k)
      EXPECT_NEAR(logits[static_cast<size_t>(ids[k])], values[k], 2e-3 * std::abs(values[0])) << "top " << k;
  }
}

TEST(Gemma3Generation, ChatPromptsRightPaddedAsEnhanceDoes) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Json g = golden();
  for (const Json& c : g.at("chat")) {
    const std::vector<int32_t> ids = stages::chat_prompt_ids(real_model().tokenizer, c.at("system").get<std::string>(),
                                                             c.at("user").get<std::string>());
    EXPECT_EQ(ids, ints(c.at("ids")));
    const PromptTokens p = right_padded_prompt(ids, 8, 0);
    EXPECT_EQ(static_cast<int64_t>(p.ids.size()), c.at("padded_to").get<int64_t>());
    const std::vector<int32_t> want = ints(c.at("greedy"));
    EXPECT_EQ(generate(real_model().model, p, greedy(static_cast<int64_t>(want.size()))).tokens, want);
  }
}

// 300 tokens of the long prompt in chunks of 100: the cache starts empty and grows across the 128- and 256-slot
// buckets, its filled slots copied each time.
TEST(Gemma3Generation, ChunkedExtendGivesTheOneShotLogits) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Json g = golden();
  std::vector<int32_t> ids = ints(g.at("cases").at(3).at("ids"));
  ids.resize(300);
  const PromptTokens p = right_padded_prompt(ids, 1, 0);
  KvCache whole, parts;
  const std::vector<float> one_shot = real_model().model.extend(whole, p.ids, p.positions, p.valid);
  std::vector<float> chunked;
  for (size_t at = 0; at < p.ids.size(); at += 100) {
    const size_t end = std::min(p.ids.size(), at + 100);
    const auto slice = [&](const std::vector<int64_t>& v) {
      return std::vector<int64_t>(v.begin() + static_cast<ptrdiff_t>(at), v.begin() + static_cast<ptrdiff_t>(end));
    };
    chunked = real_model().model.extend(parts, slice(p.ids), slice(p.positions), slice(p.valid));
  }
  ASSERT_EQ(chunked.size(), one_shot.size());
  float worst = 0.0f, top = 0.0f;
  for (size_t i = 0; i < one_shot.size(); ++i) {
    worst = std::max(worst, std::abs(chunked[i] - one_shot[i]));
    top = std::max(top, std::abs(one_shot[i]));
  }
  EXPECT_LT(worst, 1e-4f * top);
  EXPECT_EQ(parts.length, whole.length);
}

// The built-in enhancement instructions give the default model (a 270M base model) sentences to continue: its
// greedy reply to each of these prompts is words, not the column of "." lines it wrote under instructions without
// an example. A reply passes with at least 8 words (runs of two or more letters) and letters making up at least 70%
// of its non-space characters.
TEST(Gemma3Generation, BuiltInInstructionsGiveWordsFromTheDefaultModel) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  stages::EnhanceOptions options;
  options.greedy = true;
  options.max_new_tokens = 24;
  for (const char* prompt : {"a red fox in the snow", "A blue square moves left", "two cats fighting",
                             "a woman speaks to the camera", "city at night, cars passing"}) {
    const std::string reply =
        stages::enhance_prompt(real_model().model, real_model().tokenizer, prompt, options).prompt;
    int64_t words = 0, letters = 0, visible = 0, run = 0;
    for (const char c : reply + " ") {
      const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
      letters += letter ? 1 : 0;
      visible += std::isspace(static_cast<unsigned char>(c)) ? 0 : 1;
      words += !letter && run >= 2 ? 1 : 0;
      run = letter ? run + 1 : 0;
    }
    EXPECT_GE(words, 8) << prompt << " -> " << reply;
    EXPECT_GE(static_cast<double>(letters), 0.7 * static_cast<double>(visible)) << prompt << " -> " << reply;
  }
}

}  // namespace
}  // namespace ltx::gemma3
