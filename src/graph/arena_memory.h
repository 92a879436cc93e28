// Memory for a plan's arena (compile.cpp). Large arenas come straight from the kernel (an anonymous mmap: zero by
// contract), so compiling no longer writes zeros over the whole arena in user space before its first run touches
// it again: on the embedded default's connector plan (190 MB arena) compile went 0.17 s -> 0.0002 s, and the
// first run pays only the kernel's page faults it paid anyway. Transparent huge pages (madvise) were measured
// slower on this machine (touching 200 MB: 0.18 s in 4 KiB pages, 0.63 s in 2 MiB pages: the faults compact
// memory), so they are not requested.
#pragma once

#include <cstddef>
#include <memory>

#include "core/storage.h"

namespace ltx {

// Zero-filled, 64-byte aligned storage of `bytes` (at least 1) for a plan arena.
std::shared_ptr<Storage> allocate_arena(size_t bytes);

// Returns the whole pages of an arena from allocate_arena to the OS (MADV_DONTNEED on its private anonymous
// memory): address and size stay, the contents are lost and read as zero when next touched. Plans rewrite their
// arena on every run, so a plan that will not run for a while gives its pages back this way.
void release_arena_pages(const Storage& arena);

}  // namespace ltx
