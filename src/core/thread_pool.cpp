#include "core/thread_pool.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ltx {
namespace {

thread_local bool t_in_worker = false;

class ThreadPool {
 public:
  explicit ThreadPool(int n) {
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) for i in [0, n_tasks) with the caller taking task 0.
  void run(int n_tasks, const std::function<void(int)>& task) {
    std::lock_guard run_lock(run_mu_);  // one parallel region at a time
    {
      std::lock_guard lock(mu_);
      task_ = &task;
      n_tasks_ = n_tasks;
      pending_ = n_tasks - 1;
      error_ = nullptr;
      ++generation_;
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
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void worker_loop(int index) {
    t_in_worker = true;
    uint64_t seen = 0;
    while (true) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= n_tasks_) continue;
      const auto* task = task_;
      lock.unlock();
      try {
        (*task)(index);
      } catch (...) {
        std::lock_guard l(mu_);
        if (!error_) error_ = std::current_exception();
      }
      lock.lock();
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* task_ = nullptr;
  int n_tasks_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

int configured_threads() {
  if (const char* env = std::getenv("LTX_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool& pool() {
  static ThreadPool p(configured_threads());
  return p;
}

}  // namespace

int thread_count() { return pool().size(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  const int chunks = static_cast<int>(std::min<int64_t>(t_in_worker ? 1 : thread_count(), max_chunks));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  pool().run(chunks, [&](int i) {
    const int64_t begin = n * i / chunks;
    const int64_t end = n * (i + 1) / chunks;
    if (begin < end) fn(begin, end);
  });
}

}  // namespace ltx
