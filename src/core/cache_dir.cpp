#include "core/cache_dir.h"

#include <cstdlib>

#include "core/error.h"

namespace ltx {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

std::string cache_dir() {
  if (const std::string d = env("LTX_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/ltx";
  LTX_CHECK(!env("HOME").empty(), "cache", "no cache folder: set LTX_CACHE_DIR, XDG_CACHE_HOME or HOME");
  return env("HOME") + "/.cache/ltx";
}

std::string prepared_cache_dir() {
  if (env("LTX_PREPARED_CACHE") == "0") return "";
  if (env("LTX_CACHE_DIR").empty() && env("XDG_CACHE_HOME").empty() && env("HOME").empty()) return "";
  return cache_dir();
}

}  // namespace ltx
