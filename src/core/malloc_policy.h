// Process-wide allocator policy for the engine's large, short-lived buffers (RoPE tables, host-side call inputs,
// kernel workspaces).
#pragma once

namespace ltx {

// glibc serves allocations above its mmap threshold with mmap and returns them to the system on free, but raises
// that threshold each time such a block is freed (up to 32 MiB), after which same-sized buffers come from the heap
// and stay resident once freed: on the issue-5 DiT slice the process grew 12-18 MB per call that way. Fixing the
// threshold at glibc's initial 128 KiB keeps every large buffer's memory returned when it is freed. Call once at
// startup; a no-op on other C libraries.
void return_large_buffers_to_system();

}  // namespace ltx
