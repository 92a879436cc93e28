// The memory budget a decode plans against: `--memory-budget` as the user writes it, or by default what the
// machine has available now (MemAvailable in /proc/meminfo).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ltx {

// "8G", "8GiB", "1.5g", "512M", "300MB", "65536K", "123456789" (bytes): binary units (K = 1024); throws
// "[memory] ..." on anything else, on zero and on overflow.
size_t parse_memory_budget(std::string_view text);
// MemAvailable from a meminfo file (default /proc/meminfo) in bytes; throws when it cannot be read.
size_t available_memory_bytes(const std::string& meminfo_path = "/proc/meminfo");
// The budget for `--memory-budget` when given, else available_memory_bytes().
size_t memory_budget(const std::optional<std::string>& option, const std::string& meminfo_path = "/proc/meminfo");

}  // namespace ltx
