// ltx::Error as Python exceptions: ltx.Error (a RuntimeError) and one subclass per ltx::ErrorCategory, each with
// the engine's message (e.what()) and the attributes `category` (ltx::error_category_name) and `component`.
#pragma once

#include <nanobind/nanobind.h>

namespace ltx::python {

// Adds the exception classes to `m` and registers the translator that raises them for every ltx::Error.
void bind_errors(nanobind::module_& m);

}  // namespace ltx::python
