// zarrdirect._native: the C++ engine as seen from Python. The public API is the pure-Python
// package around it (zarrdirect/__init__.py); this module only moves numbers and memory.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "zarrdirect/system.hpp"
#include "errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_native, module) {
  using namespace zarrdirect;
  using namespace zarrdirect::python;
  module.doc() = "zarrdirect's C++ engine (use the zarrdirect package, not this module)";
  module.attr("__version__") = ZARRDIRECT_VERSION;
  register_error_translation();
  bind_store_options(module);
  bind_array(module);
  bind_selection(module);
  bind_device_array(module);
  bind_group(module);
  bind_write(module);
  bind_many(module);
  bind_multiscale(module);
  module.def("cuda_available", &cuda_available, "True when a CUDA device is present and usable from this process.");
  module.def("cuda_device_count", [] { return zarrdirect::cuda_device_count(); },
             "CUDA devices this process can use (device=\"cuda:N\" takes N below it); 0 without CUDA.");
  module.def("describe_system", [] { return to_python(describe_system()); },
             "What this process can do with GPUs: CUDA build, devices, GPUDirect Storage, the I/O path reads take.");
  module.def(
      "pinned_pool_stats",
      [] {
        const PinnedPoolStats stats = pinned_pool_stats();
        py::dict out;
        out["budget_bytes"] = stats.budget_bytes;
        out["in_use_bytes"] = stats.in_use_bytes;
        out["idle_bytes"] = stats.idle_bytes;
        out["allocations"] = stats.allocations;
        out["frees"] = stats.frees;
        return out;
      },
      "The process's pinned staging pool: budget, bytes in use and idle, buffers allocated and freed so far.");
  module.def("trim_pinned_pool", &trim_pinned_pool,
             "Frees the pinned staging pool's idle buffers and the host result buffers kept for reuse.");
  module.attr("cuda_built") =
#if defined(ZARRDIRECT_WITH_CUDA)
      true;
#else
      false;
#endif
}
