// The one exception type of the engine: every failure the library reports is an ltx::Error with a category (what
// kind of problem, for programs), the component that raised it and a message that names the problem and the valid
// values ("[generate] --steps must be at least 1, got 0").
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace ltx {

enum class ErrorCategory {
  Unspecified,     // raised below the API before it knew the phase; the API replaces it with the phase's category
  InvalidRequest,  // a request or option outside its valid range, or options that exclude each other
  InvalidModel,    // a model file that is missing, unreadable, malformed or of another model
  Io,              // an input that cannot be read or an output that cannot be written
  OutOfMemory,     // the request does not fit the memory budget, or an allocation failed
  Cancelled,       // the caller's CancellationToken stopped the call
  Internal,        // anything else (a bug: please report it)
};

// "invalid_request", "invalid_model", ...: stable names for logs, the C API and the server.
const char* error_category_name(ErrorCategory category);

class Error : public std::runtime_error {
 public:
  Error(std::string component, const std::string& message, ErrorCategory category = ErrorCategory::Unspecified)
      : std::runtime_error("[" + component + "] " + message), component_(std::move(component)), category_(category) {}
  const std::string& component() const { return component_; }
  ErrorCategory category() const { return category_; }
  // The same error with `category`, keeping component and message.
  Error with_category(ErrorCategory category) const {
    Error e = *this;
    e.category_ = category;
    return e;
  }

 private:
  std::string component_;
  ErrorCategory category_;
};

}  // namespace ltx
