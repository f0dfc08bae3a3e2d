// zarrdirect::Error to Python exceptions.
//
// The exception classes are defined in Python (zarrdirect/_errors.py), where multiple inheritance
// is one line: InvalidMetadataError is both a ZarrdirectError and a ValueError, so callers can
// catch either the library's type or the builtin they already handle.
#pragma once

#include <pybind11/pybind11.h>

namespace zarrdirect::python {

void register_error_translation();

}  // namespace zarrdirect::python
