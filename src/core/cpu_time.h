// CPU time this process has used so far, all threads together: a steadier measure than wall time on a shared
// machine (the first-generation benchmark reports both).
#pragma once

#include <ctime>

namespace ltx {

inline double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace ltx
