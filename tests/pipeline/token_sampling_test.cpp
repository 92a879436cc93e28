// Token sampling as transformers' generate does it with do_sample: greedy is the first argmax; top-k keeps the k
// largest (ties with the k-th stay); top-p keeps the smallest most-likely set whose mass exceeds top_p (at least
// one); the draw follows the kept probabilities and is reproducible from its seed.
#include "pipeline/token_sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

namespace ltx {
namespace {

TEST(TokenSampling, GreedyTakesTheFirstLargest) {
  TokenSampler s({.greedy = true}, 1);
  EXPECT_EQ(s.next(std::vector<float>{0.5f, 2.0f, -1.0f, 2.0f}), 1);
}

// Draw `n` tokens and count them.
std::map<int32_t, int> histogram(const SamplingOptions& o, const std::vector<float>& logits, int n, uint64_t seed) {
  TokenSampler s(o, seed);
  std::map<int32_t, int> h;
  for (int i = 0; i < n; ++i) ++h[s.next(logits)];
  return h;
}

TEST(TokenSampling, TopKAndTopPKeepOnlyTheirTokens) {
  // Probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625 (log-space logits).
  const std::vector<float> logits{std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.0625f),
                                  std::log(0.0625f)};
  const auto k2 = histogram({.top_k = 2}, logits, 4000, 3);
  EXPECT_EQ(k2.size(), 2u);
  EXPECT_NEAR(k2.at(0) / 4000.0, 2.0 / 3.0, 0.03);  // 0.5 / 0.75
  // top_p 0.7: 0.5 alone does not exceed it, 0.5 + 0.25 does: two tokens.
  EXPECT_EQ(histogram({.top_p = 0.7f}, logits, 2000, 4).size(), 2u);
  // top_p 0.8: the first three (0.875).
  EXPECT_EQ(histogram({.top_p = 0.8f}, logits, 2000, 5).size(), 3u);
  // Temperature sharpens: at 0.25 token 0 has 0.5^4 / (sum of p^4) = 0.94 of the mass.
  const auto cold = histogram({.temperature = 0.25f}, logits, 4000, 6);
  EXPECT_NEAR(cold.at(0) / 4000.0, 0.0625 / (0.0625 + 0.00390625 + 0.000244140625 + 2 * 0.0000152587890625), 0.02);
}

TEST(TokenSampling, TheSeedFixesTheDraws) {
  const std::vector<float> logits{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  const SamplingOptions o{.temperature = 0.7f, .top_k = 4, .top_p = 0.95f};
  TokenSampler a(o, 42), b(o, 42), c(o, 43);
  std::vector<int32_t> ra, rb, rc;
  for (int i = 0; i < 64; ++i) {
    ra.push_back(a.next(logits));
    rb.push_back(b.next(logits));
    rc.push_back(c.next(logits));
  }
  EXPECT_EQ(ra, rb);
  EXPECT_NE(ra, rc);
}

}  // namespace
}  // namespace ltx
