#include "models/gemma3/tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "gemma_paths.h"
#include "io/json.h"

namespace ltx::gemma3 {
namespace {
namespace fs = std::filesystem;

Json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_json(ss.str(), path);
}

// A tiny tokenizer.json in the GemmaTokenizer shape: merges ranked by position, byte fallback, added tokens.
std::string write_tiny_tokenizer_json() {
  const Json j = {
      {"normalizer", {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}},
      {"added_tokens", Json::array({{{"id", 0}, {"content", "<pad>"}, {"special", true}, {"normalized", false}},
                                    {{"id", 1}, {"content", "<eos>"}, {"special", true}, {"normalized", false}},
                                    {{"id", 2}, {"content", "<bos>"}, {"special", true}, {"normalized", false}},
                                    {{"id", 3}, {"content", "<unk>"}, {"special", true}, {"normalized", false}},
                                    {{"id", 4}, {"content", "\n"}, {"special", false}, {"normalized", false}}})},
      {"model",
       {{"type", "BPE"},
        {"byte_fallback", true},
        {"fuse_unk", true},
        {"vocab",
         {{"<pad>", 0},
          {"<eos>", 1},
          {"<bos>", 2},
          {"<unk>", 3},
          {"\n", 4},
          {"a", 5},
          {"b", 6},
          {"\u2581", 7},
          {"ab", 8},
          {"\u2581ab", 9},
          {"aa", 10},
          {"<0xC3>", 11},
          {"<0xA9>", 12},
          {"<0x0A>", 13}}},
        {"merges", Json::array({"a b", "\u2581 ab", "a a"})}}}};
  const fs::path path = fs::temp_directory_path() / ("ltx_gemma_tok_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << j.dump();
  return path.string();
}

TEST(Gemma3Tokenizer, TinyJsonMergesByRankWithByteFallbackAndAddedTokens) {
  const std::string path = write_tiny_tokenizer_json();
  const Tokenizer t = Tokenizer::from_hf_json(path);
  fs::remove(path);
  // "ab ab": a b ▁ a b -> (a,b) rank 0 twice -> ab ▁ ab -> (▁,ab) rank 1 -> ab ▁ab
  EXPECT_EQ(t.encode("ab ab"), (std::vector<int32_t>{8, 9}));
  // "aaa": (a,a) leftmost first -> aa a
  EXPECT_EQ(t.encode("aaa"), (std::vector<int32_t>{10, 5}));
  // "é" is not a piece: its UTF-8 bytes C3 A9; "\n" is an added token matched before normalisation.
  EXPECT_EQ(t.encode("a\n\xC3\xA9"), (std::vector<int32_t>{5, 4, 11, 12}));
  // Unknown characters without byte pieces fuse into one <unk>.
  EXPECT_EQ(t.encode("xyz"), (std::vector<int32_t>{3}));
  EXPECT_EQ(t.encode("<bos>ab"), (std::vector<int32_t>{2, 8}));
  // LTX: strip, one <bos>, truncate, left pad.
  EXPECT_EQ(t.encode_prompt("  ab \n"), (std::vector<int32_t>{2, 8}));
  EXPECT_EQ(t.encode_prompt("ab ab ab", 3), (std::vector<int32_t>{2, 8, 9}));
  const Tokenizer::Batch b = t.encode_batch({"ab", "ab ab ab"}, 4);
  EXPECT_EQ(b.ids.to_ints(), (std::vector<int64_t>{0, 0, 2, 8, 2, 8, 9, 9}));
  EXPECT_EQ(b.mask.to_ints(), (std::vector<int64_t>{0, 0, 1, 1, 1, 1, 1, 1}));
}

TEST(Gemma3Tokenizer, StripMatchesPythonWhitespace) {
  EXPECT_EQ(strip_unicode_whitespace(" \t\n\u3000x y\u00a0\u2003\r"), "x y");
  EXPECT_EQ(strip_unicode_whitespace("\u200bx"), "\u200bx");  // zero-width space is not isspace()
  EXPECT_EQ(strip_unicode_whitespace("   "), "");
}

// Every golden string (tools/reference/make_tokenizer_goldens.py) through `t`: raw ids and LTX's call.
void expect_matches_golden_strings(const Tokenizer& t) {
  const Json doc = read_json(std::string(LTX_SOURCE_DIR) + "/tests/data/gemma3/tokenizer_cases.json");
  const int64_t max_length = doc.at("reference").at("max_length");
  ASSERT_EQ(t.bos_id(), doc.at("reference").at("bos_id").get<int32_t>());
  ASSERT_EQ(t.pad_id(), doc.at("reference").at("pad_id").get<int32_t>());
  int n = 0, n_long = 0, failures = 0;
  for (const Json& c : doc.at("cases")) {
    const std::string text = c.at("text");
    std::vector<int32_t> ids{t.bos_id()};
    const std::vector<int32_t> body = t.encode(text);
    ids.insert(ids.end(), body.begin(), body.end());
    const auto expected = c.at("ids").get<std::vector<int32_t>>();
    const auto ltx_expected = c.at("ltx_ids").get<std::vector<int32_t>>();
    const bool ok = ids == expected && t.encode_prompt(text, max_length) == ltx_expected;
    if (!ok && ++failures <= 5) ADD_FAILURE() << "string " << n << " " << Json(text).dump() << ": ids differ";
    n_long += expected.size() > static_cast<size_t>(max_length);
    ++n;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << n << " strings differ";
  EXPECT_GE(n, 200);
  EXPECT_GE(n_long, 3);
}

// Against transformers' tokenizer built from the same GGUF.
TEST(Gemma3Tokenizer, MatchesTransformersOnTheGoldenStrings) {
  const std::string gguf = testing::real_gguf_path();
  if (gguf.empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  expect_matches_golden_strings(Tokenizer::from_gguf(gguf));
}

// The BPE derives each GGUF merge it asks for (derived_merge) instead of listing them all at load: on the whole
// 262k vocabulary it must give every merge of transformers' generate_merges list with its rank and merged id, and
// no pair outside the list (checked on the list's neighbours and on random pairs).
TEST(Gemma3Tokenizer, DerivedGgufMergesEqualTheFullList) {
  const std::string gguf = testing::real_gguf_path();
  if (gguf.empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Tokenizer t = Tokenizer::from_gguf(gguf);
  const auto listed = t.list_gguf_merges_for_testing();
  ASSERT_GT(listed.size(), 100000u);
  std::unordered_map<uint64_t, std::pair<uint64_t, int32_t>> by_pair(listed.begin(), listed.end());
  ASSERT_EQ(by_pair.size(), listed.size()) << "a pair listed twice";
  size_t wrong = 0, extra = 0, checked = 0;
  const auto check_absent = [&](int64_t l, int64_t r) {
    if (l < 0 || r < 0 || l >= t.vocab_size() || r >= t.vocab_size()) return;
    const uint64_t key = (static_cast<uint64_t>(l) << 32) | static_cast<uint64_t>(r);
    const auto derived = t.merge_for_testing(static_cast<int32_t>(l), static_cast<int32_t>(r));
    const auto it = by_pair.find(key);
    extra += derived.has_value() != (it != by_pair.end()) || (derived && *derived != it->second);
    ++checked;
  };
  for (const auto& [key, merge] : listed) {
    const auto l = static_cast<int32_t>(key >> 32), r = static_cast<int32_t>(key & 0xffffffffu);
    const auto derived = t.merge_for_testing(l, r);
    if (!derived || *derived != merge) ++wrong;
    check_absent(l, r + 1);
    check_absent(l + 1, r);
  }
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    check_absent(static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(t.vocab_size())),
                 static_cast<int64_t>((state >> 13) % 4096));  // short pieces sit at low ids: pairs that could merge
  }
  EXPECT_EQ(wrong, 0u) << "of " << listed.size() << " listed merges";
  EXPECT_EQ(extra, 0u) << "of " << checked << " other pairs";
}

// The same vocabulary as a Hugging Face tokenizer.json (e.g. that tokenizer's save_pretrained), when provided.
TEST(Gemma3Tokenizer, TokenizerJsonMatchesTransformersOnTheGoldenStrings) {
  const char* path = std::getenv("LTX_GEMMA_TOKENIZER_JSON");
  if (!path || !fs::exists(path))
    GTEST_SKIP() << "set LTX_GEMMA_TOKENIZER_JSON to the tokenizer.json of the 270M GGUF's transformers tokenizer "
                    "(AutoTokenizer.from_pretrained(dir, gguf_file=...).save_pretrained(out)) to run this";
  expect_matches_golden_strings(Tokenizer::from_hf_json(path));
}

}  // namespace
}  // namespace ltx::gemma3
