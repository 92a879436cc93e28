// LTX_PROFILE=1: wall time per kind of plan step (op, input dtypes; fused steps by their instruction list),
// accumulated over every Plan::run of the process and printed to stderr at exit, slowest first. Off by default;
// when off, a run pays one branch per step. LTX_PROFILE=shapes also splits steps by their output shape and prints
// GFLOP/s for MatMul steps (2·M·N·K per output element row, summed over calls).
#pragma once

#include <chrono>
#include <string>

namespace ltx::profile {

bool enabled();   // LTX_PROFILE is set and not "0"; read once
bool by_shape();  // LTX_PROFILE=shapes

// flops: floating-point operations of this step (0 when not counted).
void add(const std::string& label, std::chrono::steady_clock::duration spent, double flops = 0);

}  // namespace ltx::profile
