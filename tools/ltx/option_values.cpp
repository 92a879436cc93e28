#include "option_values.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "ltx/error.hpp"

namespace ltx::cli {
namespace {

template <class Int>
bool parse_whole(std::string_view value, Int& out) {
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), out);
  return !value.empty() && error == std::errc() && end == value.data() + value.size();
}

}  // namespace

void usage_error(std::string_view command, const std::string& message) {
  throw Error(std::string(command), message, ErrorCategory::InvalidRequest);
}

double finite_number(std::string_view command, const std::string& option, std::string_view value) {
  double v = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
    usage_error(command, option + " needs a finite number, got '" + std::string(value) + "'");
  return v;
}

int64_t whole_number(std::string_view command, const std::string& option, std::string_view value, int64_t min,
                     int64_t max) {
  const std::string range =
      "[" + std::to_string(min) + ", " + (max == INT64_MAX ? std::string("2^63)") : std::to_string(max) + "]");
  int64_t v = 0;
  if (!parse_whole(value, v))
    usage_error(command, option + " needs an integer in " + range + ", got '" + std::string(value) + "'");
  if (v < min) usage_error(command, option + " must be at least " + std::to_string(min) + ", got " + std::to_string(v));
  if (v > max) usage_error(command, option + " must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

uint64_t unsigned_number(std::string_view command, const std::string& option, std::string_view value) {
  uint64_t v = 0;
  if (!parse_whole(value, v))
    usage_error(command, option + " needs an integer in [0, 2^64), got '" + std::string(value) + "'");
  return v;
}

}  // namespace ltx::cli
