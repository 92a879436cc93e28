// JSON through nlohmann::json, with parse failures turned into ltx::Error naming where the text came from.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ltx {

using Json = nlohmann::json;

// Parses `text`; `origin` (a file path, "safetensors header of X") names the source in the error.
// Duplicate keys in an object are an error: nlohmann keeps the last silently, which would hide a clash of
// tensor names or config fields.
inline Json parse_json(std::string_view text, const std::string& origin) {
  std::vector<std::set<std::string>> open_objects;  // keys seen so far in each object being parsed
  const auto check_keys = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == Json::parse_event_t::key && !open_objects.back().insert(parsed.get<std::string>()).second) {
      fail("json", origin + ": duplicate key \"" + parsed.get<std::string>() + "\"");
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), check_keys);
  } catch (const Json::exception& e) {
    fail("json", origin + ": malformed JSON: " + e.what());
  }
}

}  // namespace ltx
