#include "errors.hpp"

#include "zarrdirect/error.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

const char* class_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_metadata: return "InvalidMetadataError";
    case ErrorKind::unsupported: return "UnsupportedError";
    case ErrorKind::corrupt_data: return "CorruptDataError";
    case ErrorKind::io: return "ZarrIOError";
    case ErrorKind::cuda: return "CudaError";
    case ErrorKind::invalid_argument: return "InvalidArgumentError";
    case ErrorKind::cancelled: return "CancelledError";
  }
  return "ZarrdirectError";
}

void raise(const Error& error) {
  // Looked up when raised, not at import: zarrdirect/__init__.py imports this module before it
  // has finished defining itself, and the classes are cheap to find in sys.modules.
  try {
    py::object errors = py::module_::import("zarrdirect._errors");
    PyErr_SetString(errors.attr(class_name(error.kind())).ptr(), error.what());
  } catch (py::error_already_set&) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
}

}  // namespace

void register_error_translation() {
  py::register_exception_translator([](std::exception_ptr pointer) {
    if (!pointer) return;
    try {
      std::rethrow_exception(pointer);
    } catch (const Error& error) {
      raise(error);
    }
  });
}

}  // namespace zarrdirect::python
