// The category an error leaves the API with, by the phase it happened in (ltx/error.hpp): an ltx::Error raised
// below the API is Unspecified and takes its phase's category (loading: InvalidModel, checking the request:
// InvalidRequest, writing: Io, generating: Internal); one that names its category keeps it; a failed allocation
// is OutOfMemory whatever the phase; any other exception takes `foreign`.
#pragma once

#include <utility>

#include "ltx/error.hpp"

namespace ltx::api {

// Call inside a catch block: rethrows the exception being handled as an ltx::Error with a category.
[[noreturn]] void rethrow_in_phase(ErrorCategory phase, ErrorCategory foreign = ErrorCategory::Internal);

template <class F>
auto in_phase(ErrorCategory phase, F&& f, ErrorCategory foreign = ErrorCategory::Internal) -> decltype(f()) {
  try {
    return std::forward<F>(f)();
  } catch (...) {
    rethrow_in_phase(phase, foreign);
  }
}

}  // namespace ltx::api
