#include "core/system_memory.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ltx {

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

int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

size_t resident_anonymous_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("RssAnon:")) continue;
    std::istringstream fields(line.substr(8));
    uint64_t kib = 0;
    fields >> kib;
    return fields.fail() ? 0 : static_cast<size_t>(kib) * 1024;
  }
  return 0;
}

}  // namespace ltx
