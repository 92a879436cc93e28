// MemAvailable as the default memory budget reads it (the meminfo file named, or this machine's), with clear
// errors when the file or its line is missing; this process's peak resident set.
#include "core/system_memory.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

template <typename Fn>
void expect_error(Fn&& fn, const std::string& component, const std::string& words) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one with " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.component(), component) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(SystemMemory, AvailableIsMemAvailable) {
  const std::string path = ::testing::TempDir() + "ltx_meminfo_test";
  {
    std::ofstream f(path);
    f << "MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   12345678 kB\n";
  }
  EXPECT_EQ(available_memory_bytes(path), size_t{12345678} * 1024);
  {
    std::ofstream f(path);
    f << "MemTotal:       32000000 kB\n";
  }
  expect_error([&] { available_memory_bytes(path); }, "memory", "MemAvailable");
  expect_error([&] { available_memory_bytes(path + ".missing"); }, "memory", "cannot read");
  EXPECT_GT(available_memory_bytes(), 0u);  // this machine's
  std::remove(path.c_str());
}

TEST(SystemMemory, PeakRssCountsWhatThisProcessTouched) {
  const int64_t before = peak_rss_bytes();
  EXPECT_GT(before, 0);
  std::vector<char> touched(size_t{64} << 20);
  volatile char* pages = touched.data();
  for (size_t i = 0; i < touched.size(); i += 4096) pages[i] = 1;  // 64 MiB made resident
  EXPECT_GE(peak_rss_bytes(), static_cast<int64_t>(touched.size()));
  EXPECT_GE(peak_rss_bytes(), before);
}

}  // namespace
}  // namespace ltx
