// The process-wide pool rebuilt with another thread count (set_thread_count, what ltx::EngineOptions::threads
// sets): the count changes, work still covers every item once on at most that many threads, 0 goes back to the
// configured count, and a call from inside a parallel region is refused instead of waiting for itself.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

// The threads that ran parallel_for over n items, each item counted.
std::set<std::thread::id> run_and_count(int64_t n, std::vector<int>& hits) {
  hits.assign(static_cast<size_t>(n), 0);
  std::mutex mu;
  std::set<std::thread::id> ids;
  parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
    std::lock_guard lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  return ids;
}

TEST(ThreadPool, SetThreadCountRebuildsThePool) {
  const int configured = thread_count();
  std::vector<int> hits;
  for (const int n : {3, 1, 2, 3}) {
    set_thread_count(n);
    EXPECT_EQ(thread_count(), n);
    const std::set<std::thread::id> ids = run_and_count(1000, hits);
    EXPECT_LE(static_cast<int>(ids.size()), n);
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "item " << i;
  }
  set_thread_count(0);
  EXPECT_EQ(thread_count(), configured);  // no LTX_THREADS change in between: the count the pool started with
  EXPECT_THROW(set_thread_count(-1), Error);
}

TEST(ThreadPool, SetThreadCountInsideAParallelRegionIsRefused) {
  set_thread_count(2);
  std::atomic<int> refused{0};
  parallel_for(2, 1, [&](int64_t, int64_t) {
    try {
      set_thread_count(3);
    } catch (const Error&) {
      ++refused;
    }
  });
  EXPECT_EQ(refused.load(), 2);
  EXPECT_EQ(thread_count(), 2);
  set_thread_count(0);
}

}  // namespace
}  // namespace ltx
