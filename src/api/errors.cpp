// ltx::error_category_name (ltx/error.hpp) and the phase mapping (api/error_phase.h).
#include <exception>
#include <new>
#include <string>

#include "api/error_phase.h"

namespace ltx {

const char* error_category_name(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::Unspecified:
      return "unspecified";
    case ErrorCategory::InvalidRequest:
      return "invalid_request";
    case ErrorCategory::InvalidModel:
      return "invalid_model";
    case ErrorCategory::Io:
      return "io";
    case ErrorCategory::OutOfMemory:
      return "out_of_memory";
    case ErrorCategory::Cancelled:
      return "cancelled";
    case ErrorCategory::Internal:
      return "internal";
  }
  return "unknown";  // a value outside the enum, from a cast
}

namespace api {

void rethrow_in_phase(ErrorCategory phase, ErrorCategory foreign) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::Unspecified) throw;
    throw e.with_category(phase);
  } catch (const std::bad_alloc&) {
    throw Error("engine", "out of memory (an allocation failed)", ErrorCategory::OutOfMemory);
  } catch (const std::exception& e) {
    throw Error("engine", e.what(), foreign);
  } catch (...) {
    throw Error("engine", "an unknown exception (a bug: please report it)", ErrorCategory::Internal);
  }
}

}  // namespace api
}  // namespace ltx
