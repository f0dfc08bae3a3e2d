// Running a read so that Python stays responsive: Ctrl-C stops it, progress callbacks run.
//
// The read itself runs on a helper thread with the GIL released. The calling thread waits in
// slices of ~50 ms; between slices it takes the GIL briefly, lets Python run its signal handlers
// (PyErr_CheckSignals: only the main thread can, which is why the waiting is done here and not in
// the library's worker threads) and calls the caller's progress callable with (done, total). A
// pending KeyboardInterrupt, an exception from the callable, or the callable returning False
// cancels the read between chunks; the Python exception is then raised once the read has
// stopped, so no thread is left writing into memory the caller gets back.
#pragma once

#include <functional>

#include <pybind11/pybind11.h>

#include "zarrdirect/settings.hpp"

namespace zarrdirect::python {

// Runs `body` with a ProgressCallback to put in its Settings. `callback` is None or a callable
// taking (done, total). `cuda_device` (>= 0) is made current on the helper thread first.
// Must be called with the GIL held; returns with it held.
void run_interruptible(const std::function<void(const ProgressCallback&)>& body, const pybind11::object& callback,
                       int cuda_device);

}  // namespace zarrdirect::python
