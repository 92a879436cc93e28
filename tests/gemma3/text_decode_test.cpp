// The text side of prompt enhancement: Tokenizer::decode as transformers decodes (U+2581 as a space, runs of <0xNN>
// pieces fused into UTF-8 or one U+FFFD per byte when invalid, special tokens and the image markers skipped) and
// clean_response as ltx-pipelines' helpers.py (the replacement table, then everything before the first code point
// Python calls a letter; a text without letters whole), on the examples the reference gives.
#include <gtest/gtest.h>

#include <vector>

#include "core/unicode_letters.h"
#include "gemma_paths.h"
#include "models/gemma3/tokenizer.h"
#include "stages/prompt_enhancer.h"

namespace ltx::gemma3 {
namespace {

TEST(CleanResponse, MatchesHelpersPy) {
  const std::pair<std::string, std::string> cases[] = {
      {"\u201cHello\u201d", "Hello\""},
      {"  ** 1. \u00abVoil\u00e0\u00bb \u2014 ok", "Voil\u00e0\u00bb - ok"},
      {"\u00a1Hola!", "Hola!"},
      {"\u2026and then", "and then"},
      {"\u00a0\u2032x", "x"},
      {"\u2160 roman", "roman"},  // a letter-number (Nl) is not a letter
      {"\u00bd half", "half"},
      {"\u0301e", "e"},           // a combining mark neither
      {"\u0660 digit", "digit"},  // nor an Arabic-Indic digit
      {"\u65e5\u672c", "\u65e5\u672c"},
      {"42", "42"},
      {"   ", "   "},
      {"it\u2019s \u2212 5\u20136", "it's - 5-6"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(stages::clean_response(in), want) << in;
}

TEST(UnicodeLetters, PythonsIsalpha) {
  for (const char32_t c : {U'a', U'Z', U'\u00e9', U'\u01c5', U'\u02b0', U'\u65e5', U'\U00010400'})
    EXPECT_TRUE(is_unicode_letter(c)) << static_cast<uint32_t>(c);
  for (const char32_t c : {U'0', U' ', U'-', U'\u2160', U'\u0660', U'\u0301', U'\u00bd', U'\u24b6', U'\U0010FFFF'})
    EXPECT_FALSE(is_unicode_letter(c)) << static_cast<uint32_t>(c);
}

TEST(TokenizerDecode, ByteFallbackSpacesAndSpecials) {
  if (testing::real_gguf_path().empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const Tokenizer t = Tokenizer::from_gguf(testing::real_gguf_path());
  const std::string text = "A fox \u00e9t\u00e9 \U0001F98A runs";  // an emoji the vocabulary spells in bytes
  const std::vector<int32_t> ids = t.encode(text);
  EXPECT_EQ(t.decode(ids, true), text);
  std::vector<int32_t> with_specials{t.bos_id(), t.find("<start_of_turn>")};
  with_specials.insert(with_specials.end(), ids.begin(), ids.end());
  for (const char* s : {"<end_of_turn>", "<start_of_image>", "<end_of_image>", "<eos>"})
    with_specials.push_back(t.find(s));
  EXPECT_EQ(t.decode(with_specials, true), text);
  EXPECT_NE(t.decode(with_specials, false), text);
  // A run of bytes that is not UTF-8: one U+FFFD per byte.
  const std::vector<int32_t> bad{t.find("<0xF0>"), t.find("<0x9F>"), t.find("A")};
  EXPECT_EQ(t.decode(bad, true), "\uFFFD\uFFFDA");
}

}  // namespace
}  // namespace ltx::gemma3
