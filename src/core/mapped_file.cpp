#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

struct Mapping {
  const std::byte* begin;
  const std::byte* end;
};

// The live mappings, for the page functions' address lookups. Page operations share the lock (a read-ahead may
// block on the disk while a drop proceeds); mapping and unmapping take it alone. Both are never destroyed: files
// held by other statics (caches of opened files) unmap during exit, after this file's statics would be gone.
std::shared_mutex& registry_mutex() {
  static auto* m = new std::shared_mutex;
  return *m;
}
std::vector<Mapping>& registry() {
  static auto* r = new std::vector<Mapping>;
  return *r;
}

size_t page_size() {
  static const auto size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// Calls f(begin, bytes) on each page-aligned piece of [p, p + n) inside a live mapping, holding the registry's lock
// so that no piece can be unmapped (and its addresses reused by other memory) meanwhile.
template <typename F>
void for_each_mapped_piece(const void* p, size_t n, F&& f) {
  if (n == 0) return;
  const auto* lo = static_cast<const std::byte*>(p);
  const std::byte* hi = lo + n;
  const size_t page = page_size();
  const std::shared_lock lock(registry_mutex());
  for (const Mapping& m : registry()) {
    const std::byte* b = std::max(lo, m.begin);
    const std::byte* e = std::min(hi, m.end);
    if (b >= e) continue;
    const auto aligned = reinterpret_cast<uintptr_t>(b) / page * page;  // mappings start on a page
    f(reinterpret_cast<std::byte*>(aligned), static_cast<size_t>(reinterpret_cast<uintptr_t>(e) - aligned));
  }
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LTX_CHECK(fd >= 0, "file", path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("file", path + ": not a regular file");
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* p = nullptr;
  if (size > 0) {
    p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("file", path + ": cannot map: " + std::strerror(err));
    }
    const std::lock_guard lock(registry_mutex());
    registry().push_back({static_cast<std::byte*>(p), static_cast<std::byte*>(p) + size});
  }
  ::close(fd);
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<std::byte*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
  {
    const std::lock_guard lock(registry_mutex());
    auto& r = registry();
    r.erase(std::remove_if(r.begin(), r.end(), [&](const Mapping& m) { return m.begin == data_; }), r.end());
  }
  ::munmap(data_, size_);
}

size_t file_mapped_bytes(const void* p, size_t n) {
  size_t bytes = 0;
  const auto* lo = static_cast<const std::byte*>(p);
  const std::shared_lock lock(registry_mutex());
  for (const Mapping& m : registry()) {
    const std::byte* b = std::max(lo, m.begin);
    const std::byte* e = std::min(lo + n, m.end);
    if (b < e) bytes += static_cast<size_t>(e - b);
  }
  return bytes;
}

void drop_file_pages(const void* p, size_t n) {
  for_each_mapped_piece(p, n, [](std::byte* b, size_t bytes) { ::madvise(b, bytes, MADV_DONTNEED); });
}

void load_file_pages(const void* p, size_t n) {
  for_each_mapped_piece(p, n, [](std::byte* b, size_t bytes) {
    if (::madvise(b, bytes, MADV_POPULATE_READ) == 0) return;
    ::madvise(b, bytes, MADV_WILLNEED);
    const size_t page = page_size();
    volatile const std::byte* v = b;
    for (size_t i = 0; i < bytes; i += page) (void)v[i];
  });
}

void drop_all_file_pages() {
  const std::shared_lock lock(registry_mutex());
  for (const Mapping& m : registry())
    ::madvise(const_cast<std::byte*>(m.begin), static_cast<size_t>(m.end - m.begin), MADV_DONTNEED);
}

void drop_file_pages_except(std::vector<std::pair<const void*, size_t>> keep) {
  std::sort(keep.begin(), keep.end());
  const auto page = static_cast<uintptr_t>(page_size());
  const std::shared_lock lock(registry_mutex());
  for (const Mapping& m : registry()) {
    // The gaps between kept ranges inside the mapping, shrunk to whole pages: a page holding kept bytes stays.
    auto from = reinterpret_cast<uintptr_t>(m.begin);
    const auto end = reinterpret_cast<uintptr_t>(m.end);
    const auto drop_until = [&](uintptr_t until) {
      const uintptr_t b = (from + page - 1) / page * page, e = std::min(until, end) / page * page;
      if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
    };
    for (const auto& [p, n] : keep) {
      const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
      if (hi <= from || lo >= end) continue;
      drop_until(lo);
      from = std::max(from, hi);
    }
    drop_until(end);
  }
}

size_t resident_bytes_outside_mappings() {
  std::vector<std::pair<uintptr_t, uintptr_t>> live;
  {
    const std::shared_lock lock(registry_mutex());
    for (const Mapping& m : registry())
      live.emplace_back(reinterpret_cast<uintptr_t>(m.begin), reinterpret_cast<uintptr_t>(m.end));
  }
  // smaps: a header line "begin-end perms offset dev inode [path]" per mapping, then "Key: value kB" lines.
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool counted = false;
  size_t bytes = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      const uintptr_t begin = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
      counted =
          std::none_of(live.begin(), live.end(), [&](const auto& m) { return begin >= m.first && begin < m.second; });
    } else if (counted && line.starts_with("Rss:")) {
      bytes += static_cast<size_t>(std::stoull(line.substr(4))) * 1024;
    }
  }
  return bytes;
}

}  // namespace ltx
