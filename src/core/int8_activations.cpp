#include "core/int8_activations.h"

#include <atomic>

namespace ltx {
namespace {

std::atomic<bool> g_on{false};

}  // namespace

void set_int8_activations(bool on) { g_on.store(on, std::memory_order_relaxed); }
bool int8_activations() { return g_on.load(std::memory_order_relaxed); }

}  // namespace ltx
