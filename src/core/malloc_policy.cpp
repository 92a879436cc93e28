#include "core/malloc_policy.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ltx {

void return_large_buffers_to_system() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
}

}  // namespace ltx
