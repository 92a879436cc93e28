// A bounded find-or-make cache for objects that are expensive to make and cheap to keep a while: oneDNN
// primitives by shape. Shared by all threads. When it holds `capacity` entries it drops them all before adding
// the next: a model has a few dozen shapes per kernel kind, so the bound only stops the growth of a long-running
// process that meets ever new shapes (session 2's vocoder held ~100 never-dropped conv primitives, 8.7 GB).
// Callers keep their own shared_ptr, so dropping never pulls an object from under a running call; the next call
// at a dropped shape makes it again.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace ltx::cpu {

template <class Key, class Value>
class PrimitiveCache {
 public:
  explicit PrimitiveCache(size_t capacity) : capacity_(capacity) {}

  // The entry for `key` when `usable(*entry)` holds, else `make()` (a std::shared_ptr<Value>) stored in its
  // place. `make` runs under the cache's lock: two threads never make the same entry twice.
  template <class Make, class Usable>
  std::shared_ptr<Value> get(const Key& key, Make&& make, Usable&& usable) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && usable(*it->second)) return it->second;
    if (it == entries_.end() && entries_.size() >= capacity_) entries_.clear();
    std::shared_ptr<Value> made = make();
    entries_[key] = made;
    return made;
  }
  template <class Make>
  std::shared_ptr<Value> get(const Key& key, Make&& make) {
    return get(key, make, [](const Value&) { return true; });
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<Value>> entries_;
  const size_t capacity_;
};

}  // namespace ltx::cpu
