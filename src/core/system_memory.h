// What the machine and this process say about memory: MemAvailable (the default budget a video decode plans
// against) and this process's peak resident set (reported in the sidecar).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ltx {

// MemAvailable from a meminfo file (default /proc/meminfo) in bytes; throws "[memory] ..." when it cannot be read.
size_t available_memory_bytes(const std::string& meminfo_path = "/proc/meminfo");

// Peak resident set of this process so far, in bytes (getrusage).
int64_t peak_rss_bytes();

// This process's resident anonymous memory now (RssAnon of /proc/self/status), in bytes; 0 when unreadable. What
// a run's memory plan finds already held (loaded models' own copies, caches) before it plans the rest.
size_t resident_anonymous_bytes();

}  // namespace ltx
