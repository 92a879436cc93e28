// Writing a file all-or-nothing: bytes go to a temporary file beside the target, renamed into place on commit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ltx::io {

class AtomicFile {
 public:
  // Synced: commit() waits for the bytes to reach the disk before the rename, so that after a crash the target is
  // the old file or the whole new one. Unsynced skips that wait (for a 200 MB cache file it can take most of a
  // second): a crash may then leave a renamed file with missing data, so use it only for files whose readers
  // verify them (a cache whose hashes catch the damage and rebuild it).
  enum class Durability : uint8_t { Synced, Unsynced };
  // Creates "<path>.tmp-XXXXXX" in the target's folder; throws ltx::Error naming `path` when it cannot.
  explicit AtomicFile(std::string path, Durability durability = Durability::Synced);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless commit() succeeded

  void write(const void* data, size_t bytes);
  // Flushes, closes and renames the temporary file to the target path.
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
  Durability durability_;
};

}  // namespace ltx::io
