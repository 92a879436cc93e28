// oneDNN as Debian builds it runs on OpenMP, whose idle workers spin after every parallel region (libgomp's
// default active wait) and starve the engine's own thread pool: measured 40-200x slowdowns of small decodes on a
// busy 2-core machine. libgomp reads OMP_WAIT_POLICY once, when it loads (before main), so a process sets it by
// re-executing itself.
#pragma once

namespace ltx {

// If OMP_WAIT_POLICY is unset: sets it to "passive" and re-executes this program with the same arguments.
// Returns only when nothing needed doing or the re-exec failed (the program then runs as is).
void ensure_passive_openmp_wait(char** argv);

}  // namespace ltx
