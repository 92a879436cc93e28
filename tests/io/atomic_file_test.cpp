// AtomicFile: the target appears only on commit, whole, in both durabilities; an abandoned file leaves nothing.
#include "io/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_files.h"

namespace ltx::io {
namespace {

namespace fs = std::filesystem;

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, CommitsWholeInBothDurabilities) {
  for (const auto durability : {AtomicFile::Durability::Synced, AtomicFile::Durability::Unsynced}) {
    test::TempDir dir;
    const std::string path = dir.file("out.bin");
    {
      AtomicFile f(path, durability);
      f.write("abc", 3);
      EXPECT_FALSE(fs::exists(path));  // nothing at the target before commit
      f.write("de", 2);
      f.commit();
    }
    EXPECT_EQ(test::read_bytes(path), "abcde");
    EXPECT_EQ(entries(dir.path().string()), 1u);  // no temporary left beside it
  }
}

TEST(AtomicFile, AbandonedLeavesNothing) {
  for (const auto durability : {AtomicFile::Durability::Synced, AtomicFile::Durability::Unsynced}) {
    test::TempDir dir;
    const std::string path = dir.file("out.bin");
    test::write_bytes(path, "old");
    {
      AtomicFile f(path, durability);
      f.write("new", 3);
    }
    EXPECT_EQ(test::read_bytes(path), "old");
    EXPECT_EQ(entries(dir.path().string()), 1u);
  }
}

}  // namespace
}  // namespace ltx::io
