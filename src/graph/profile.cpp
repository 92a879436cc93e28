#include "graph/profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ltx::profile {
namespace {

struct Entry {
  double seconds = 0;
  double flops = 0;
  long calls = 0;
};

// Prints the table when the process exits (static destruction), so every plan of the run is covered.
struct Table {
  std::mutex mutex;
  std::unordered_map<std::string, Entry> entries;

  ~Table() {
    std::vector<std::pair<std::string, Entry>> rows(entries.begin(), entries.end());
    std::ranges::sort(rows, [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (const auto& [label, e] : rows) total += e.seconds;
    std::fprintf(stderr, "# LTX_PROFILE: %.3f s in plan steps\n# %10s %6s %8s  %s\n", total, "seconds", "%", "calls",
                 "step");
    for (const auto& [label, e] : rows) {
      std::fprintf(stderr, "# %10.3f %6.1f %8ld  %s", e.seconds, total > 0 ? 100 * e.seconds / total : 0.0, e.calls,
                   label.c_str());
      if (e.flops > 0 && e.seconds > 0) std::fprintf(stderr, "  (%.1f GFLOP/s)", e.flops / e.seconds * 1e-9);
      std::fprintf(stderr, "\n");
    }
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

bool enabled() {
  static const bool on = [] {
    const char* env = std::getenv("LTX_PROFILE");
    return env != nullptr && *env != '\0' && std::string(env) != "0";
  }();
  return on;
}

bool by_shape() {
  static const bool on = [] {
    const char* env = std::getenv("LTX_PROFILE");
    return env != nullptr && std::string(env) == "shapes";
  }();
  return on;
}

void add(const std::string& label, std::chrono::steady_clock::duration spent, double flops) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  Entry& e = t.entries[label];
  e.seconds += std::chrono::duration<double>(spent).count();
  e.flops += flops;
  ++e.calls;
}

}  // namespace ltx::profile
