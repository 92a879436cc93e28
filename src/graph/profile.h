// LTX_PROFILE=1: wall time per kind of plan step (op, input dtypes; fused steps by their instruction list),
// accumulated over every Plan::run of the process and printed to stderr at exit, slowest first. Off by default;
// when off, a run pays one branch per step.
#pragma once

#include <chrono>
#include <string>

namespace ltx::profile {

bool enabled();  // LTX_PROFILE is set and not "0"; read once

void add(const std::string& label, std::chrono::steady_clock::duration spent);

}  // namespace ltx::profile
