#include <algorithm>

#include "graph/compile.h"

namespace ltx {
namespace {

uint64_t hash_words(const std::vector<uint64_t>& words) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over 64-bit words, then a final mix
  for (uint64_t w : words) {
    h ^= w;
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  return h;
}

}  // namespace

Plan& PlanCache::get(const Graph& graph, const CompileOptions& options) {
  std::vector<uint64_t> sig = graph_signature(graph, options);
  auto& bucket = plans_[hash_words(sig)];
  for (Entry& e : bucket)
    if (e.signature == sig) {
      ++hits_;
      return *e.plan;
    }
  bucket.push_back({std::move(sig), compile(graph, *backend_, options)});
  ++compiles_;
  ++n_plans_;
  return *bucket.back().plan;
}

size_t PlanCache::max_peak_bytes() const {
  size_t peak = 0;
  for (const auto& [hash, bucket] : plans_)
    for (const Entry& e : bucket) peak = std::max(peak, e.plan->peak_bytes());
  return peak;
}

void PlanCache::release_arena_pages() const {
  for (const auto& [hash, entries] : plans_)
    for (const Entry& e : entries) e.plan->release_arena_pages();
}

void PlanCache::clear() {
  plans_.clear();
  n_plans_ = 0;
}

}  // namespace ltx
