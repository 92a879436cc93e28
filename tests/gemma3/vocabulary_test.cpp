#include "models/gemma3/vocabulary.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gemma_paths.h"
#include "io/gguf.h"

namespace ltx::gemma3 {
namespace {

// The map the vocabulary replaces: piece -> last id, filled in id order.
std::unordered_map<std::string, int32_t> map_of(const std::vector<std::string>& pieces) {
  std::unordered_map<std::string, int32_t> map;
  for (size_t i = 0; i < pieces.size(); ++i) map[pieces[i]] = static_cast<int32_t>(i);
  return map;
}

int32_t map_find(const std::unordered_map<std::string, int32_t>& map, const std::string& s) {
  const auto it = map.find(s);
  return it == map.end() ? -1 : it->second;
}

// Every piece, and strings one byte off a piece (often absent, sometimes another piece), is found at the map's
// id; find_concat agrees with find on the concatenation for every split of a piece and of a near miss.
void expect_equals_map(const std::vector<std::string>& pieces, size_t stride) {
  const Vocabulary v(pieces);
  const auto map = map_of(pieces);
  ASSERT_EQ(v.size(), static_cast<int64_t>(pieces.size()));
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string& p = pieces[i];
    ASSERT_EQ(v.piece(static_cast<int32_t>(i)), p) << i;
    ASSERT_EQ(v.find(p), map_find(map, p)) << i;
    if (i % stride != 0) continue;
    for (const std::string& near :
         {p + "a", p + "\xE2\x96\x81", p.empty() ? "x" : p.substr(1), p.empty() ? "y" : p.substr(0, p.size() - 1)}) {
      ASSERT_EQ(v.find(near), map_find(map, near)) << i << " '" << near << "'";
      for (size_t cut = 0; cut <= near.size(); ++cut)
        ASSERT_EQ(v.find_concat(near.substr(0, cut), near.substr(cut)), map_find(map, near)) << i << " " << cut;
    }
  }
}

TEST(Gemma3Vocabulary, SyntheticEqualsTheMapItReplaces) {
  // Short random pieces over a small alphabet (many prefixes of each other, some repeated), multi-byte characters,
  // the empty piece and a repeat of it.
  std::mt19937 rng(7);
  const std::vector<std::string> alphabet = {"a", "b", "c", "\xE2\x96\x81", "\xC3\xA9", "<", ">", std::string(1, '\0')};
  std::vector<std::string> pieces = {"", "a", "AB", "AB", "", "<bos>"};  // the random pieces have no B, o or s
  for (int i = 0; i < 5000; ++i) {
    std::string p;
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) p += alphabet[rng() % alphabet.size()];
    pieces.push_back(p);
  }
  expect_equals_map(pieces, 1);
  const Vocabulary v(pieces);
  EXPECT_EQ(v.find("AB"), 3);  // a repeated piece: the last id
  EXPECT_EQ(v.find(""), 4);
  EXPECT_EQ(v.find("zzz"), -1);
  EXPECT_EQ(v.find_concat("<bo", "s>"), 5);
}

TEST(Gemma3Vocabulary, EmptyFindsNothing) {
  EXPECT_EQ(Vocabulary().find("a"), -1);
  EXPECT_EQ(Vocabulary().size(), 0);
  const Vocabulary v(std::vector<std::string>{});
  EXPECT_EQ(v.find(""), -1);
  EXPECT_EQ(v.find_concat("", ""), -1);
}

// On Gemma 3's own 262k pieces (as the GGUF stores them).
TEST(Gemma3Vocabulary, RealGgufVocabularyEqualsTheMap) {
  const std::string gguf = testing::real_gguf_path();
  if (gguf.empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const std::shared_ptr<const GGUFFile> file = GGUFFile::open_shared(gguf);  // the views below point into it
  const GGUFArray& tokens = file->value("tokenizer.ggml.tokens").as_array();
  const auto& views = std::get<std::vector<std::string_view>>(tokens.values);
  const std::vector<std::string> pieces(views.begin(), views.end());
  ASSERT_GT(pieces.size(), 200000u);
  expect_equals_map(pieces, 97);  // near misses on every 97th piece keeps it a few seconds under ASan
}

}  // namespace
}  // namespace ltx::gemma3
