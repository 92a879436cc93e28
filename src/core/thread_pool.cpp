#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "core/error.h"

namespace ltx {
namespace {

thread_local bool t_in_worker = false;

// How long a worker waiting for the next region, and the caller waiting for its workers, poll before they sleep on
// a condition variable: a plan runs its steps back to back, each a region, and a sleeping thread takes tens of
// microseconds to wake (a generation step of a small model is hundreds of regions of ~50 us: polling made the 270M
// Gemma's steps 1.5x faster). Polling costs at most this much of a core after a region: 50 us gave the same steps
// as 200 us, and two test processes sharing two cores lose less to each other's polling (the suite 202 s instead of
// 230-249 s; 174-189 s without polling). Yielding the core while polling cost a fifth of the gain; it is not done.
constexpr auto kSpin = std::chrono::microseconds(50);

// Polls `ready` with a pause between reads until it holds or kSpin has passed; whether it holds.
template <typename Ready>
bool spin_until(Ready&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

class ThreadPool {
 public:
  explicit ThreadPool(int n) {
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) for i in [0, n_tasks) with the caller taking task 0.
  void run(int n_tasks, const std::function<void(int)>& task) {
    std::lock_guard run_lock(run_mu_);  // one parallel region at a time
    {
      // Under mu_, so that a worker between its check and its sleep cannot miss the new generation.
      std::lock_guard lock(mu_);
      task_ = &task;
      n_tasks_ = n_tasks;
      pending_.store(n_tasks - 1);
      error_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    t_in_worker = true;
    try {
      task(0);
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_worker = false;
    const auto done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
    if (!spin_until(done)) {
      std::unique_lock lock(mu_);
      done_cv_.wait(lock, done);
    }
    std::lock_guard lock(mu_);
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void worker_loop(int index) {
    t_in_worker = true;
    uint64_t seen = 0;
    const auto next = [&] { return stop_.load() || generation_.load(std::memory_order_acquire) != seen; };
    while (true) {
      if (!spin_until(next)) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, next);
      }
      if (stop_.load()) return;
      const std::function<void(int)>* task = nullptr;
      {
        std::lock_guard lock(mu_);
        seen = generation_.load();
        if (index >= n_tasks_) continue;
        task = task_;
      }
      try {
        (*task)(index);
      } catch (...) {
        std::lock_guard l(mu_);
        if (!error_) error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard lock(mu_);  // the caller may be between its check and its sleep
        done_cv_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* task_ = nullptr;
  int n_tasks_ = 0;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

int configured_threads() {
  if (const char* env = std::getenv("LTX_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// The pool is replaced only by set_thread_count, under the exclusive lock; a parallel region holds the shared
// lock while it runs, so the pool it runs on is never destroyed under it. (A function's static: made on first use,
// whatever the order static initializers of other files run in.)
std::shared_mutex& pool_mutex() {
  static std::shared_mutex m;
  return m;
}
std::unique_ptr<ThreadPool> g_pool;
std::atomic<int> g_threads{0};
std::once_flag g_pool_made;

// The pool's thread count without taking the lock: thread_count() is asked on every kernel call.
void make_pool_once() {
  std::call_once(g_pool_made, [] {
    const int n = configured_threads();
    g_pool = std::make_unique<ThreadPool>(n);
    g_threads.store(n, std::memory_order_release);
  });
}

}  // namespace

int thread_count() {
  make_pool_once();
  return g_threads.load(std::memory_order_acquire);
}

void set_thread_count(int n) {
  LTX_CHECK(n >= 0, "threads", "the thread count must be >= 0 (0: LTX_THREADS or every core), got ", n);
  LTX_CHECK(!t_in_worker, "threads", "set_thread_count called inside a parallel region");
  make_pool_once();
  const int want = n > 0 ? n : configured_threads();
  std::unique_lock lock(pool_mutex());  // waits for running parallel regions
  if (g_pool->size() == want) return;
  g_pool.reset();  // joins the old workers before the new ones start
  g_pool = std::make_unique<ThreadPool>(want);
  g_threads.store(want, std::memory_order_release);
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  const int chunks = static_cast<int>(std::min<int64_t>(t_in_worker ? 1 : thread_count(), max_chunks));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  std::shared_lock lock(pool_mutex());
  // The pool may have been rebuilt smaller since thread_count() was read.
  const int tasks = std::min(chunks, g_pool->size());
  if (tasks <= 1) {
    lock.unlock();  // fn may call parallel_for again on this thread; a shared lock is not recursive
    fn(0, n);
    return;
  }
  g_pool->run(tasks, [&](int i) {
    const int64_t begin = n * i / tasks;
    const int64_t end = n * (i + 1) / tasks;
    if (begin < end) fn(begin, end);
  });
}

}  // namespace ltx
