#include "progress.h"

#include <nanobind/stl/string.h>

#include <exception>
#include <utility>

namespace nb = nanobind;

namespace ltx::python {
namespace {

// What stops the engine when the callable raised; the Python exception itself is kept in PythonProgress.
struct CallableRaised : std::exception {
  [[nodiscard]] const char* what() const noexcept override { return "the progress callable raised an exception"; }
};

const char* kind_name(ProgressEvent::Kind kind) {
  switch (kind) {
    case ProgressEvent::Kind::Begin:
      return "begin";
    case ProgressEvent::Kind::Step:
      return "step";
    case ProgressEvent::Kind::End:
      return "end";
    case ProgressEvent::Kind::Note:
      return "note";
  }
  return "note";
}

std::string repr(const Progress& p) {
  std::string s = "<ltx.Progress " + p.kind + " '" + p.stage + "'";
  if (p.kind == "step" || p.kind == "end") s += " " + std::to_string(p.step) + "/" + std::to_string(p.total);
  if (!p.message.empty()) s += ": " + p.message;
  return s + ">";
}

}  // namespace

void bind_progress(nb::module_& m) {
  nb::class_<Progress>(m, "Progress",
                       "A progress report: a stage ('load models', 'encode prompt', 'denoise', 'decode') begins, "
                       "reports each finished step and ends; notes carry a line of information.")
      .def_ro("kind", &Progress::kind, "'begin', 'step', 'end' or 'note'")
      .def_ro("stage", &Progress::stage, "the current stage")
      .def_ro("step", &Progress::step, "step: steps done in this stage; end: steps the stage ran")
      .def_ro("total", &Progress::total, "steps announced for this stage so far")
      .def_ro("elapsed", &Progress::elapsed, "seconds since the stage began")
      .def_ro("eta", &Progress::eta, "step: seconds left at the mean step time so far; negative while unknown")
      .def_ro("message", &Progress::message, "note: the line of information")
      .def("__repr__", &repr);
}

PythonProgress::PythonProgress(nb::object callable) : callable_(std::move(callable)) {
  if (callable_.is_none()) return;
  if (!PyCallable_Check(callable_.ptr())) throw nb::type_error("progress must be a callable or None");
  callback_ = [this](const ProgressEvent& event) { call(event); };
}

void PythonProgress::call(const ProgressEvent& event) {
  Progress p{kind_name(event.kind),     std::string(event.stage), event.step, event.total, event.elapsed, event.eta,
             std::string(event.message)};
  nb::gil_scoped_acquire gil;
  if (!gil) return;  // the interpreter is shutting down: nobody to tell
  try {
    callable_(nb::cast(std::move(p)));
  } catch (nb::python_error& e) {
    raised_.emplace(std::move(e));
    throw CallableRaised();
  }
}

void PythonProgress::note(const std::string& message) const {
  if (!callback_) return;
  ProgressEvent e;
  e.kind = ProgressEvent::Kind::Note;
  e.message = message;
  callback_(e);
}

void PythonProgress::raise_if_callable_raised() {
  if (!raised_) return;
  nb::python_error e = std::move(*raised_);
  raised_.reset();
  throw e;
}

}  // namespace ltx::python
