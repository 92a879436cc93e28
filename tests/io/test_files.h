// Test helpers: a temporary folder removed afterwards, raw file writes, and error-message assertions.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "core/error.h"

namespace ltx::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ltx-io-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs fn, which must throw ltx::Error whose message contains every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
  } catch (const ltx::Error& e) {
    const std::string what = e.what();
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
    return;
  }
  ADD_FAILURE() << "no ltx::Error thrown";
}

// The resident bytes (smaps "Rss:") of this process's mapping that contains `p`.
inline size_t mapping_rss(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto at = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) return std::stoull(line.substr(4)) * 1024;
  }
  return 0;
}

}  // namespace ltx::test
