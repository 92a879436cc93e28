// One process-wide pool of worker threads; kernels split their work with parallel_for.
#pragma once

#include <cstdint>
#include <functional>

namespace ltx {

// Threads the pool runs (LTX_THREADS, else the hardware concurrency, until set_thread_count).
int thread_count();

// Rebuilds the pool with `n` threads (0: LTX_THREADS, else the hardware concurrency) when it runs another count;
// waits for running parallel regions to finish first. Throws when called from inside a parallel region, which
// would wait for itself.
void set_thread_count(int n);

// Runs fn(begin, end) over [0, n) split into at most thread_count() contiguous chunks of at least `grain`
// items; blocks until all are done. Calls from inside a worker run inline (no nested oversubscription).
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ltx
