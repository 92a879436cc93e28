// parse_json: malformed text and duplicate keys become ltx::Error naming the origin.
#include "io/json.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace ltx {
namespace {

TEST(Json, ParsesValidText) {
  const Json j = parse_json(R"({"a": {"b": [1, 2]}, "c": "x"})", "config.json");
  EXPECT_EQ(j["a"]["b"][1].get<int>(), 2);
  EXPECT_EQ(j["c"].get<std::string>(), "x");
  // The same key in different objects is not a duplicate.
  EXPECT_NO_THROW(parse_json(R"({"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 3}, {"k": 4}]})", "x"));
}

TEST(Json, MalformedTextNamesTheOrigin) {
  test::expect_error([] { parse_json(R"({"a": )", "model/config.json"); },
                     {"[json]", "model/config.json", "malformed JSON"});
  test::expect_error([] { parse_json("", "empty.json"); }, {"empty.json", "malformed JSON"});
}

TEST(Json, DuplicateKeysAreErrors) {
  test::expect_error([] { parse_json(R"({"a": 1, "a": 2})", "c.json"); }, {"c.json", "duplicate key \"a\""});
  test::expect_error([] { parse_json(R"({"x": [{"n": 1, "n": 1}]})", "c.json"); }, {"duplicate key \"n\""});
  test::expect_error([] { parse_json(R"({"": 1, "b": {}, "": 2})", "c.json"); }, {"duplicate key \"\""});
  // Many siblings (as a safetensors header's tensor entries), the repeat last.
  std::string many = "{";
  for (int i = 0; i < 3000; ++i) many += "\"t" + std::to_string(i) + "\": {\"shape\": [1]}, ";
  EXPECT_EQ(parse_json(many + "\"t\": 0}", "h").size(), 3001u);
  test::expect_error([&] { parse_json(many + "\"t7\": 0}", "h"); }, {"duplicate key \"t7\""});
}

}  // namespace
}  // namespace ltx
