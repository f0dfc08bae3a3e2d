// The parts of the _native module, one function per source file.
#pragma once

#include <pybind11/pybind11.h>

namespace zarrdirect::python {

void bind_array(pybind11::module_& module);        // bind_array.cpp
void bind_selection(pybind11::module_& module);    // bind_selection.cpp (after bind_array)
void bind_group(pybind11::module_& module);        // bind_group.cpp
void bind_device_array(pybind11::module_& module);  // device_array.cpp
void bind_write(pybind11::module_& module);        // bind_write.cpp
void bind_many(pybind11::module_& module);         // bind_many.cpp (after bind_array)
void bind_multiscale(pybind11::module_& module);   // bind_multiscale.cpp
void bind_store_options(pybind11::module_& module);  // bind_store_options.cpp (before the opens)

}  // namespace zarrdirect::python
