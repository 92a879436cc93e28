#include "models/ltx/decode_memory_budget.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace ltx {

size_t parse_memory_budget(std::string_view text) {
  const std::string t(text);
  const auto bad = [&](const std::string& why) {
    fail("memory", "--memory-budget '" + t + "': " + why + " (examples: 8G, 1.5GiB, 512M, 1073741824)");
  };
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) != 0 || t[i] == '.')) ++i;
  if (i == 0) bad("expected a number");
  double value = 0;
  try {
    size_t used = 0;
    value = std::stod(t.substr(0, i), &used);
    if (used != i) bad("malformed number");
  } catch (const std::logic_error&) {
    bad("malformed number");
  }
  std::string unit;
  for (size_t j = i; j < t.size(); ++j) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(t[j])));
  if (unit.ends_with("IB"))
    unit = unit.substr(0, unit.size() - 2);
  else if (unit.size() == 2 && unit[1] == 'B')
    unit = unit.substr(0, 1);
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    bad("unknown unit '" + t.substr(i) + "'");
  const double bytes = std::floor(value * scale);
  if (!(bytes >= 1)) bad("must be at least one byte");
  if (bytes >= static_cast<double>(std::numeric_limits<size_t>::max())) bad("too large");
  return static_cast<size_t>(bytes);
}

size_t available_memory_bytes(const std::string& meminfo_path) {
  std::ifstream in(meminfo_path);
  LTX_CHECK(in.good(), "memory", "cannot read ", meminfo_path, " for the default memory budget; pass --memory-budget");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    std::string unit;
    fields >> kib >> unit;
    LTX_CHECK(!fields.fail() && unit == "kB", "memory", meminfo_path, ": cannot parse '", line, "'");
    return static_cast<size_t>(kib) * 1024;
  }
  fail("memory", meminfo_path + " has no MemAvailable line; pass --memory-budget");
}

size_t memory_budget(const std::optional<std::string>& option, const std::string& meminfo_path) {
  return option ? parse_memory_budget(*option) : available_memory_bytes(meminfo_path);
}

}  // namespace ltx
