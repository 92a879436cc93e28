// A Python callable as the engine's ProgressCallback, and the Progress object it is called with.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>

#include "ltx/progress.hpp"

namespace ltx::python {

// One ltx::ProgressEvent, owning its strings (the event's views live only during the call).
struct Progress {
  std::string kind;  // "begin", "step", "end", "note"
  std::string stage;
  int64_t step = 0, total = 0;
  double elapsed = 0, eta = -1;
  std::string message;
};

void bind_progress(nanobind::module_& m);

// Made and destroyed with the GIL held, on the calling thread. The engine may call callback() from any thread, with
// or without the GIL: it takes the GIL to call the callable. When the callable raises, its exception is kept and
// the engine stopped with a C++ exception of this file's own; raise_if_callable_raised() then raises the Python
// exception itself, so that it reaches the caller intact whatever the engine did with the C++ one.
class PythonProgress {
 public:
  explicit PythonProgress(nanobind::object callable);  // None: no callback
  PythonProgress(const PythonProgress&) = delete;      // callback() refers to this object
  PythonProgress& operator=(const PythonProgress&) = delete;

  const ProgressCallback& callback() const { return callback_; }
  // Tells the callable a line of information, as the engine's notes do.
  void note(const std::string& message) const;
  // With the GIL held, after the engine returned or threw.
  void raise_if_callable_raised();

 private:
  void call(const ProgressEvent& event);

  nanobind::object callable_;
  std::optional<nanobind::python_error> raised_;
  ProgressCallback callback_;
};

}  // namespace ltx::python
