#include "core/storage.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"

namespace ltx {
namespace {
std::atomic<uint64_t> g_allocations{0};
constexpr size_t kAlignment = 64;
}  // namespace

Storage::Storage(std::byte* data, size_t bytes, bool owned, std::shared_ptr<const void> keepalive)
    : data_(data), bytes_(bytes), owned_(owned), keepalive_(std::move(keepalive)) {}

Storage::~Storage() {
  if (owned_) std::free(data_);
}

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  LTX_CHECK(p != nullptr, "storage", "out of memory allocating ", bytes, " bytes");
  std::memset(p, 0, rounded == 0 ? kAlignment : rounded);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<Storage>(new Storage(static_cast<std::byte*>(p), bytes, true, nullptr));
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, std::shared_ptr<const void> keepalive) {
  return std::shared_ptr<Storage>(new Storage(static_cast<std::byte*>(data), bytes, false, std::move(keepalive)));
}

uint64_t Storage::allocation_count() { return g_allocations.load(std::memory_order_relaxed); }

}  // namespace ltx
