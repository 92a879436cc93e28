#include "errors.h"

#include <array>
#include <exception>
#include <string>

#include "ltx/error.hpp"

namespace nb = nanobind;

namespace ltx::python {
namespace {

constexpr int kCategories = static_cast<int>(ErrorCategory::Internal) + 1;

// The classes, by category. References owned for the life of the process: the translator may run until the
// interpreter is gone, and a static nb::object would be released after that.
std::array<PyObject*, kCategories> g_classes = {};

PyObject* class_for(ErrorCategory category) {
  const int i = static_cast<int>(category);
  return i >= 0 && i < kCategories && g_classes[i] != nullptr ? g_classes[i] : g_classes[0];
}

// `bases`: a class or a tuple of classes.
PyObject* add_class(nb::module_& m, const char* name, ErrorCategory category, nb::handle bases, const char* doc) {
  const std::string qualified = std::string("ltx.") + name;  // __module__ "ltx": tracebacks read ltx.InvalidRequest
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw nb::python_error();
  nb::handle h(cls);
  h.attr("category") = error_category_name(category);
  h.attr("component") = nb::none();
  m.attr(name) = h;
  g_classes[static_cast<int>(category)] = cls;
  return cls;
}

// Raises `e` as its class with the attributes set. Never throws: a failure leaves that failure's Python error set.
void set_python_error(const Error& e) {
  PyObject* cls = class_for(e.category());
  const std::string message = e.what();
  // "replace": a path in the message need not be UTF-8
  nb::object text = nb::steal(PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace"));
  if (!text.is_valid()) return;
  nb::object exc = nb::steal(PyObject_CallOneArg(cls, text.ptr()));
  if (!exc.is_valid()) return;
  nb::object category = nb::steal(PyUnicode_FromString(error_category_name(e.category())));
  nb::object component =
      nb::steal(PyUnicode_DecodeUTF8(e.component().data(), static_cast<Py_ssize_t>(e.component().size()), "replace"));
  if (!category.is_valid() || !component.is_valid() || PyObject_SetAttrString(exc.ptr(), "category", category.ptr()) ||
      PyObject_SetAttrString(exc.ptr(), "component", component.ptr()))
    return;
  PyErr_SetObject(cls, exc.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    set_python_error(e);
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  const nb::handle runtime_error(PyExc_RuntimeError);
  PyObject* base = add_class(m, "Error", ErrorCategory::Unspecified, runtime_error,
                             "Every failure the ltx engine reports. str(e) is the engine's message; e.category is the "
                             "stable name of its kind ('invalid_request', ...), e.component the part that raised it.");
  const nb::handle error(base);
  // A second base where a built-in exception means the same, so that `except ValueError` etc. catch these too.
  add_class(m, "InvalidRequest", ErrorCategory::InvalidRequest, nb::make_tuple(error, nb::handle(PyExc_ValueError)),
            "A request or option outside its valid range, or options that exclude each other (also a ValueError).");
  add_class(m, "InvalidModel", ErrorCategory::InvalidModel, error,
            "A model file that is missing, unreadable, malformed or of another model.");
  // Also an OSError: the category is a file that cannot be read or written, what OSError means to Python code
  // (`except OSError` around a save() catches it as it catches open()'s failures). errno stays None.
  add_class(m, "IoError", ErrorCategory::Io, nb::make_tuple(error, nb::handle(PyExc_OSError)),
            "An input that cannot be read or an output that cannot be written (also an OSError).");
  add_class(m, "OutOfMemory", ErrorCategory::OutOfMemory, nb::make_tuple(error, nb::handle(PyExc_MemoryError)),
            "The request does not fit the memory budget, or an allocation failed (also a MemoryError).");
  add_class(m, "Cancelled", ErrorCategory::Cancelled, error, "The call was cancelled.");
  add_class(m, "InternalError", ErrorCategory::Internal, error, "A bug in the engine: please report it.");
  nb::register_exception_translator(translate);
}

}  // namespace ltx::python
