// The extension module ltx._ltx: the public C++ API (include/ltx/) for Python. python/ltx/__init__.py re-exports it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "engine.h"
#include "errors.h"
#include "ltx/engine.hpp"
#include "ltx/options.hpp"
#include "progress.h"
#include "video.h"

NB_MODULE(_ltx, m) {
  m.doc() = "LTX-2 audio-video generation: the ltx engine's C++ API";
  m.def(
      "version", [] { return ltx::version(); }, "The engine's version, e.g. '0.1.0'.");
  m.def(
      "available_backends", [] { return ltx::available_backends(); },
      "The backends Engine(backend=...) can name in this build, e.g. ['cpu', 'xla'].");
  ltx::python::bind_errors(m);
  ltx::python::bind_progress(m);
  ltx::python::bind_video(m);
  ltx::python::bind_engine(m);
}
