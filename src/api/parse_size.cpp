// ltx::parse_size (ltx/options.hpp).
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "ltx/error.hpp"
#include "ltx/options.hpp"

namespace ltx {

uint64_t parse_size(std::string_view text, std::string_view name) {
  const auto bad = [&](const std::string& why) {
    throw Error(
        "options",
        std::string(name) + " '" + std::string(text) + "': " + why + " (examples: 8G, 1.5GiB, 512M, 1073741824)",
        ErrorCategory::InvalidRequest);
  };
  size_t n = 0;
  while (n < text.size() && ((text[n] >= '0' && text[n] <= '9') || text[n] == '.')) ++n;
  if (n == 0) bad("expected a number");
  double value = 0;
  // std::from_chars: no locale; the digits-and-points prefix above leaves no sign or exponent to it.
  const auto [end, error] = std::from_chars(text.data(), text.data() + n, value);
  if (error != std::errc() || end != text.data() + n || !std::isfinite(value)) bad("malformed number");
  std::string unit;
  for (const char c : text.substr(n)) unit += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  if (unit.ends_with("IB"))
    unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit[1] == 'B')
    unit.resize(1);
  double scale = 1;
  if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    bad("unknown unit '" + std::string(text.substr(n)) + "'");
  const double bytes = std::floor(value * scale);
  if (!(bytes >= 1)) bad("must be at least one byte");
  if (bytes >= 18446744073709551616.0) bad("too large");  // 2^64: does not fit uint64_t
  return static_cast<uint64_t>(bytes);
}

}  // namespace ltx
