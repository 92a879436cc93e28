// JSON through nlohmann::json, with parse failures turned into ltx::Error naming where the text came from.
#pragma once

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ltx {

using Json = nlohmann::json;

namespace json_detail {

// Finds the first key repeated within one object (a SAX pass: nlohmann's other way to see keys, the callback
// parser, rescans the parent object each time a child object ends, which is quadratic in the number of siblings:
// 4 ms of the 7 ms it took to read the embedded default checkpoint's 1,419-entry safetensors header).
class DuplicateKeyFinder : public nlohmann::json_sax<Json> {
 public:
  std::optional<std::string> duplicate;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    open_objects_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (open_objects_.back().insert(k).second) return true;
    duplicate = k;
    return false;
  }
  bool end_object() override {
    open_objects_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::vector<std::set<std::string>> open_objects_;  // keys seen so far in each object being parsed
};

}  // namespace json_detail

// Parses `text`; `origin` (a file path, "safetensors header of X") names the source in the error.
// Duplicate keys in an object are an error: nlohmann keeps the last silently, which would hide a clash of
// tensor names or config fields.
inline Json parse_json(std::string_view text, const std::string& origin) {
  Json parsed;
  try {
    parsed = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    fail("json", origin + ": malformed JSON: " + e.what());
  }
  json_detail::DuplicateKeyFinder finder;
  Json::sax_parse(text.begin(), text.end(), &finder);
  if (finder.duplicate) fail("json", origin + ": duplicate key \"" + *finder.duplicate + "\"");
  // A number no integer field can hold: nlohmann converts a float to an integer field unchecked (undefined behaviour
  // out of range), so such a number is refused here, once for every reader. Iterative: nesting may be deep.
  std::vector<const Json*> pending{&parsed};
  while (!pending.empty()) {
    const Json* j = pending.back();
    pending.pop_back();
    if (j->is_number_float() && !(std::fabs(j->get<double>()) < 9.2e18))
      fail("json", origin + ": the number " + j->dump() + " is out of range (at most 9.2e18 in magnitude)");
    if (j->is_structured())
      for (const Json& child : *j) pending.push_back(&child);
  }
  return parsed;
}

// Runs `read` (a configuration's fields read from parsed JSON) with nlohmann's type errors (an array where an object
// belongs, a string where a number does, a number out of its field's range) turned into ltx::Error(component,
// "<what>: <message>"): a malformed file is a clear refusal, not an internal error.
template <typename Read>
auto read_json_fields(std::string_view component, std::string_view what, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const Json::exception& e) {
    fail(std::string(component), std::string(what) + ": malformed configuration: " + e.what());
  }
}

// The JSON file at `path`; `component` heads the error when it cannot be read.
inline Json read_json_file(const std::string& path, std::string_view component) {
  std::ifstream in(path);
  LTX_CHECK(in.good(), std::string(component), path, ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), path);
}

}  // namespace ltx
