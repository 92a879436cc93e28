#include "graph/arena_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "core/error.h"

namespace ltx {
namespace {

// Below this an arena is an ordinary allocation (a map per small plan is not worth a system call).
constexpr size_t kMappedFrom = size_t{8} << 20;

}  // namespace

std::shared_ptr<Storage> allocate_arena(size_t bytes) {
  if (bytes < kMappedFrom) return Storage::allocate(bytes == 0 ? 1 : bytes);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);  // page aligned
  LTX_CHECK(base != MAP_FAILED, "plan", "out of memory mapping a ", bytes, "-byte arena");
  std::shared_ptr<const void> mapping(base, [bytes](const void* p) { munmap(const_cast<void*>(p), bytes); });
  return Storage::borrow(base, bytes, std::move(mapping));
}

void release_arena_pages(const Storage& arena) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(arena.data()) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(arena.data()) + arena.bytes()) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace ltx
