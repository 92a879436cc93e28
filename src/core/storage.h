// A block of bytes behind tensors: owned (aligned heap), or borrowed from an arena or a mapped file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ltx {

class Storage {
 public:
  // Owned, 64-byte aligned, zero-filled.
  static std::shared_ptr<Storage> allocate(size_t bytes);
  // Borrowed: `keepalive` owns the memory (a mapped file, an arena) and lives as long as this storage.
  static std::shared_ptr<Storage> borrow(void* data, size_t bytes, std::shared_ptr<const void> keepalive);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  std::byte* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool owned() const { return owned_; }

  // Number of owned allocations made by this process so far; tests use it to prove a run allocates nothing.
  static uint64_t allocation_count();

 private:
  Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keepalive);

  std::byte* data_;
  size_t bytes_;
  bool owned_;
  std::shared_ptr<const void> keepalive_;
};

}  // namespace ltx
