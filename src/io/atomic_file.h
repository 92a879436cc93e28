// Writing a file all-or-nothing: bytes go to a temporary file beside the target, renamed into place on commit.
#pragma once

#include <cstddef>
#include <string>

namespace ltx::io {

class AtomicFile {
 public:
  // Creates "<path>.tmp-XXXXXX" in the target's folder; throws ltx::Error naming `path` when it cannot.
  explicit AtomicFile(std::string path);
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
};

}  // namespace ltx::io
