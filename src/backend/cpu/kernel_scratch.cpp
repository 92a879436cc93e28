#include "backend/cpu/kernel_scratch.h"

namespace ltx::cpu {
namespace {

thread_local KernelScratch t_bound;

}  // namespace

KernelScratch bound_kernel_scratch() { return t_bound; }

KernelScratchBinding::KernelScratchBinding(KernelScratch span) : previous_(t_bound) { t_bound = span; }

KernelScratchBinding::~KernelScratchBinding() { t_bound = previous_; }

}  // namespace ltx::cpu
