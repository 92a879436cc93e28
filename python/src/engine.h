// ltx.Engine: the model set loaded once, then generate() and generate_batch() returning ltx.Video objects.
#pragma once

#include <nanobind/nanobind.h>

namespace ltx::python {

void bind_engine(nanobind::module_& m);

}  // namespace ltx::python
