// JSON through nlohmann::json, with parse failures turned into ltx::Error naming where the text came from.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ltx {

using Json = nlohmann::json;

// Parses `text`; `origin` (a file path, "safetensors header of X") names the source in the error.
inline Json parse_json(std::string_view text, const std::string& origin) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    fail("json", origin + ": malformed JSON: " + e.what());
  }
}

}  // namespace ltx
