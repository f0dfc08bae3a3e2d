// _native.StoreOptions: how a store is reached beyond its path (zarrdirect/store_options.hpp).
// The package builds one from a storage_options dict (zarrdirect/_storage.py), which checks the
// keys and types; the engine checks the values (header syntax, token characters, ranges).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "zarrdirect/store_options.hpp"

namespace py = pybind11;

namespace zarrdirect::python {

void bind_store_options(py::module_& module) {
  py::class_<StoreOptions>(module, "StoreOptions", "HTTP headers, bearer token, concurrency and retries of a store.")
      .def(py::init<>())
      .def_readwrite("http_headers", &StoreOptions::http_headers)
      .def_readwrite("http_bearer_token", &StoreOptions::http_bearer_token)
      .def_readwrite("http_concurrency", &StoreOptions::http_concurrency)
      .def_readwrite("http_retries", &StoreOptions::http_retries)
      // Never the token or the headers' values: a repr ends up in logs and tracebacks.
      .def("__repr__", [](const StoreOptions& self) {
        return "<zarrdirect._native.StoreOptions: " + std::to_string(self.http_headers.size()) + " headers, token " +
               (self.http_bearer_token.empty() ? "unset" : "set") + ">";
      });
}

}  // namespace zarrdirect::python
