// _native.Array: opening an array and reading it, into new memory or the caller's.
//
// The Python layer (zarrdirect/_array.py) turns indices and `out=` objects into plain numbers
// first; what arrives here is a list of (start, stop) pairs, pointers and byte strides.
#include <optional>
#include <string>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "abandonable.hpp"
#include "bindings.hpp"
#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "device_array.hpp"
#include "interruptible.hpp"
#include "read_new_memory.hpp"
#include "zarrdirect/describe.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// Reads into new memory: a NumPy view for the host, a DeviceArray for CUDA. Returns (data, stats).
py::tuple read(const Array& array, const Pairs& pairs, const std::optional<std::vector<std::int64_t>>& shape,
               const std::string& device_name, int cuda_device, std::optional<std::uintptr_t> stream,
               unsigned threads, const py::object& progress) {
  Region resolved;
  return read_into_new_memory(
      array,
      [&] {
        resolved = resolve_region(region_from_python(pairs), array.metadata().shape);
        return region_shape(resolved);
      },
      shape, device_name, cuda_device, stream, threads, progress,
      [&](const Destination& destination, const Settings& settings) {
        return array.read_into(resolved, destination, settings);
      });
}

// Reads into memory the caller owns (a NumPy array, or device memory from CuPy / PyTorch / ...).
py::dict read_into(const Array& array, const Pairs& pairs, std::uintptr_t data, const std::vector<std::int64_t>& byte_strides,
                   const std::string& device_name, int cuda_device, std::optional<std::uintptr_t> stream,
                   unsigned threads, const py::object& progress) {
  const Device device = parse_device(device_name);
  checked_device(device, cuda_device);
  if (device == Device::cpu) stream.reset();
  auto* pointer = reinterpret_cast<void*>(data);
  const int run_device = device == Device::cuda ? device_for_out(pointer, cuda_device) : -1;
  Region region = region_from_python(pairs);
  Settings settings = make_settings(threads);
  ReadStats stats;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        Destination destination{pointer, byte_strides, device, stream_pointer(stream),
                                device == Device::cuda ? cuda_device : DeviceSpec::kCurrent};
        stats = array.read_into(region, destination, with_progress);
      },
      progress, run_device);
  return stats_to_dict(stats);
}

}  // namespace

void bind_array(py::module_& module) {
  py::class_<Array>(module, "Array", "An open Zarr array (the engine side of zarrdirect.Array).")
      .def_static(
          "open",
          [](const std::string& path, const StoreOptions& options) {
            return open_abandoning_on_interrupt<Array>([path, options] { return Array::open(path, options); });
          },
          py::arg("path"), py::arg("options") = StoreOptions{})
      .def_property_readonly("path", [](const Array& self) { return self.path().string(); })
      // The schema of `zarrdirect info --json` (zarrdirect/describe.hpp); lists the folder.
      .def("describe",
           [](const Array& self) {
             nlohmann::json doc;
             {
               py::gil_scoped_release unlocked;
               doc = describe(self);
             }
             return to_python(doc);
           })
      .def("bytes_stored",
           [](const Array& self) {
             py::gil_scoped_release unlocked;
             return self.storage_summary().bytes_stored;
           })
      .def("chunks_stored",
           [](const Array& self) {
             py::gil_scoped_release unlocked;
             return self.storage_summary().chunks_stored;
           })
      .def_property_readonly("metadata", [](const Array& self) { return to_python(describe_metadata(self.metadata())); })
      .def_property_readonly("fill_value_bytes",
                             [](const Array& self) {
                               const auto& fill = self.metadata().fill_value;
                               return py::bytes(reinterpret_cast<const char*>(fill.data()), fill.size());
                             })
      .def("read", &read, py::arg("region"), py::arg("shape"), py::arg("device"), py::arg("cuda_device"),
           py::arg("stream"), py::arg("threads"), py::arg("progress"))
      .def("read_into", &read_into, py::arg("region"), py::arg("data"), py::arg("byte_strides"), py::arg("device"),
           py::arg("cuda_device"), py::arg("stream"), py::arg("threads"), py::arg("progress"));
}

}  // namespace zarrdirect::python
