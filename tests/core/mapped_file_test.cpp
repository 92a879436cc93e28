// What a run's memory plan counts as already held (resident_bytes_outside_mappings): a live mapping's pages do not
// count, however many are read in, and anonymous memory the process touches does.
#include "core/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace ltx {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(MappedFile, ResidentBytesOutsideMappingsLeaveTheMappingsOut) {
  const std::string path = ::testing::TempDir() + "ltx_mapped_file_test.bin";
  {
    std::vector<char> bytes(64 * kMiB, 1);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  const std::shared_ptr<MappedFile> file = MappedFile::open(path);
  const size_t before = resident_bytes_outside_mappings();
  load_file_pages(file->data(), file->size());  // 64 MiB of file pages in this process's resident set
  const size_t after_mapping = resident_bytes_outside_mappings();
  EXPECT_LT(after_mapping, before + 8 * kMiB) << "the mapping's pages were counted as held";

  std::vector<char> anonymous(64 * kMiB);
  for (size_t i = 0; i < anonymous.size(); i += 4096) anonymous[i] = static_cast<char>(i);
  const size_t after_anonymous = resident_bytes_outside_mappings();
  EXPECT_GT(after_anonymous, after_mapping + 56 * kMiB) << "64 MiB of touched heap was not counted";
  EXPECT_EQ(anonymous[8192], static_cast<char>(8192));  // the writes happened
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ltx
