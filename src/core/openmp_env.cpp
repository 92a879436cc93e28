#include "core/openmp_env.h"

#include <unistd.h>

#include <cstdlib>

namespace ltx {

void ensure_passive_openmp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);  // returns only on failure
}

}  // namespace ltx
