// Values of the `ltx` subcommands' options: numbers that must be finite or whole and in range. Every failure is an
// ltx::Error (InvalidRequest) from `command` naming the option, the value and the valid range.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ltx::cli {

[[noreturn]] void usage_error(std::string_view command, const std::string& message);

// The whole value as a finite number (no locale, no spaces, no "inf" or "nan").
double finite_number(std::string_view command, const std::string& option, std::string_view value);
// A whole number in [min, max].
int64_t whole_number(std::string_view command, const std::string& option, std::string_view value, int64_t min,
                     int64_t max = INT64_MAX);
// A whole number in [0, 2^64) (seeds).
uint64_t unsigned_number(std::string_view command, const std::string& option, std::string_view value);

}  // namespace ltx::cli
