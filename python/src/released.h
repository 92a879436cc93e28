// Running the engine's long calls without the GIL: other Python threads run meanwhile, the progress callable is
// called with the GIL taken back (progress.h), and generate() stops on Ctrl-C.
#pragma once

#include <nanobind/nanobind.h>

#include <utility>

#include "ltx/engine.hpp"
#include "progress.h"

namespace ltx::python {

// Called with the GIL held: runs `work` on this thread with the GIL released. When it throws, the progress callable's
// own exception is raised if it raised one, else work's exception propagates (ltx::Error: errors.h).
template <class Work>
auto run_released(PythonProgress& progress, Work&& work) -> decltype(work()) {
  try {
    nanobind::gil_scoped_release release;
    return std::forward<Work>(work)();
  } catch (...) {  // the GIL is back: `release` ended before the handler
    progress.raise_if_callable_raised();
    throw;
  }
}

// Called with the GIL held: Engine::generate on a thread of its own while this one waits with the GIL released,
// taking it back every 50 ms to run Python's signal handlers (PyErr_CheckSignals). When one raises (Ctrl-C:
// KeyboardInterrupt), the call is cancelled, its thread awaited, and that exception raised; the engine stays usable.
GenerateResult generate_interruptible(Engine& engine, const GenerateRequest& request, PythonProgress& progress);

}  // namespace ltx::python
