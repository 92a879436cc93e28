// The engine components `ltx verify` can run, registered by name (the manifest's "component").
#pragma once

#include "verify/runner.h"

namespace ltx {

// Adds a runner for every component the engine implements. Components not listed here count as
// "not implemented" in verify's summary, never as passed.
void register_builtin_components(ComponentRegistry& registry);

}  // namespace ltx
