// A read-only memory map of a whole file. Tensors borrow from it through Storage::borrow.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace ltx {

class MappedFile {
 public:
  // Maps `path` read-only; throws ltx::Error naming the file when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, std::byte* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  std::byte* data_;
  size_t size_;
};

}  // namespace ltx
