// ltx::parse_size and ltx::parse_lora_file (ltx/options.hpp), the grammars of `ltx generate --memory-budget` /
// `--lora` and of the C API's "memory_budget" / "lora": sizes with binary units, and everything else refused as an
// InvalidRequest naming the option and the text. Only ltx/ headers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ltx/ltx.hpp"

namespace {

void expect_invalid(const std::string& text, const std::string& name) {
  try {
    ltx::parse_size(text, name);
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const ltx::Error& e) {
    EXPECT_EQ(e.category(), ltx::ErrorCategory::InvalidRequest) << e.what();
    EXPECT_NE(std::string(e.what()).find(name + " '" + text + "'"), std::string::npos) << e.what();
  }
}

TEST(ParseSize, BinaryUnits) {
  EXPECT_EQ(ltx::parse_size("123456789"), 123456789u);
  EXPECT_EQ(ltx::parse_size("8G"), uint64_t{8} << 30);
  EXPECT_EQ(ltx::parse_size("8GiB"), uint64_t{8} << 30);
  EXPECT_EQ(ltx::parse_size("1.5g"), uint64_t{3} << 29);
  EXPECT_EQ(ltx::parse_size("512M"), uint64_t{512} << 20);
  EXPECT_EQ(ltx::parse_size("300MB"), uint64_t{300} << 20);
  EXPECT_EQ(ltx::parse_size("64k"), uint64_t{64} << 10);
  EXPECT_EQ(ltx::parse_size("2t"), uint64_t{2} << 40);
  EXPECT_EQ(ltx::parse_size("100b"), 100u);
}

TEST(ParseSize, RejectsNonsenseNamingTheOption) {
  // Empty, no number, unknown unit, a sign, zero, two points, a space, an exponent, below a byte, past 2^64.
  for (const char* bad :
       {"", "G", "8X", "-1G", "+1G", "0", "1.2.3G", "8 G", "1e9", "0.0001K", "1e30T", "100000000000T"}) {
    expect_invalid(bad, "--memory-budget");
    expect_invalid(bad, "memory_budget");
  }
}

TEST(ParseLoraFile, StrengthAfterTheLastColonOnlyWhenANumber) {
  const ltx::LoraFile plain = ltx::parse_lora_file("style.safetensors");
  EXPECT_EQ(plain.path, "style.safetensors");
  EXPECT_EQ(plain.strength, 1.0f);
  const ltx::LoraFile strong = ltx::parse_lora_file("style.safetensors:0.8");
  EXPECT_EQ(strong.path, "style.safetensors");
  EXPECT_EQ(strong.strength, 0.8f);
  EXPECT_EQ(ltx::parse_lora_file("dir:with:colons/style.safetensors").path, "dir:with:colons/style.safetensors");
  for (const char* bad : {"", ":0.5"}) {
    try {
      ltx::parse_lora_file(bad, "--lora");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ltx::Error& e) {
      EXPECT_EQ(e.category(), ltx::ErrorCategory::InvalidRequest);
      EXPECT_NE(std::string(e.what()).find("--lora"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
