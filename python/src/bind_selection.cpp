// _native.Array.read_selection / read_selection_into: reads of selections beyond boxes (slice
// steps, index lists, masks); _native.Array.read_points: coordinate selections (arr.vindex), whose
// points arrive per axis as 1-d int64 arrays of one length, broadcast by zarrdirect/_region.py. The Python layer (zarrdirect/_region.py) has already checked the
// key with NumPy's rules and messages; what arrives per array axis is an int (an index), a
// (start, stop, step) tuple (None: an open bound) or a 1-d int64 array of indices.
#include <optional>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "device_array.hpp"
#include "interruptible.hpp"
#include "read_new_memory.hpp"
#include "zarrdirect/selection.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

Selection selection_from_python(const py::list& axes) {
  Selection selection;
  for (const py::handle item : axes) {
    if (py::isinstance<py::tuple>(item)) {
      auto parts = item.cast<py::tuple>();
      if (parts.size() != 3) throw Error(ErrorKind::invalid_argument, "selection: a slice needs (start, stop, step)");
      auto bound = [&](std::size_t k) { return parts[k].is_none() ? std::optional<std::int64_t>() : parts[k].cast<std::int64_t>(); };
      auto start = bound(0);
      auto stop = bound(1);
      selection.push_back(AxisSelection::slice_open(start.has_value(), start.value_or(0), stop.has_value(),
                                                    stop.value_or(0), parts[2].cast<std::int64_t>()));
    } else if (py::isinstance<py::int_>(item)) {
      selection.push_back(AxisSelection::index(item.cast<std::int64_t>()));
    } else {
      auto indices = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(item);
      if (!indices || indices.ndim() != 1)
        throw Error(ErrorKind::invalid_argument, "selection: an index list must be a 1-d integer array");
      selection.push_back(AxisSelection::list(std::vector<std::int64_t>(indices.data(), indices.data() + indices.size())));
    }
  }
  return selection;
}

py::tuple read_selection(const Array& array, const py::list& axes, const std::optional<std::vector<std::int64_t>>& shape,
                         const std::string& device_name, int cuda_device, std::optional<std::uintptr_t> stream,
                         unsigned threads, const py::object& progress) {
  const Selection selection = selection_from_python(axes);
  return read_into_new_memory(
      array, [&] { return selection_shape(selection, array.metadata().shape); }, shape, device_name, cuda_device, stream,
      threads, progress, [&](const Destination& destination, const Settings& settings) {
        return array.read_selection_into(selection, destination, settings);
      });
}

// `byte_strides` come per array axis (zarrdirect/_out.py); the engine takes them per result axis.
py::dict read_selection_into(const Array& array, const py::list& axes, std::uintptr_t data,
                             const std::vector<std::int64_t>& byte_strides, const std::string& device_name,
                             int cuda_device, std::optional<std::uintptr_t> stream, unsigned threads,
                             const py::object& progress) {
  const Device device = parse_device(device_name);
  checked_device(device, cuda_device);
  if (device == Device::cpu) stream.reset();
  auto* pointer = reinterpret_cast<void*>(data);
  const Selection selection = selection_from_python(axes);
  std::vector<std::int64_t> result_strides;
  for (std::size_t d = 0; d < selection.size() && d < byte_strides.size(); ++d)
    if (selection[d].kind() != AxisSelection::Kind::index) result_strides.push_back(byte_strides[d]);
  // As read_into: host memory, or another GPU's, handed over as this read's device memory is
  // refused by name instead of being written by the wrong device.
  const int run_device = device == Device::cuda ? device_for_out(pointer, cuda_device) : -1;
  const Settings settings = make_settings(threads);
  ReadStats stats;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        Destination destination{pointer, result_strides, device, stream_pointer(stream)};
        stats = array.read_selection_into(selection, destination, with_progress);
      },
      progress, run_device);
  return stats_to_dict(stats);
}

// The points land as one run of elements; `shape` (the broadcast index shape) is how Python sees it.
py::tuple read_points(const Array& array, const py::list& axes, const std::vector<std::int64_t>& shape,
                      const std::string& device_name, int cuda_device, std::optional<std::uintptr_t> stream,
                      unsigned threads, const py::object& progress) {
  std::vector<std::vector<std::int64_t>> coordinates;
  for (const py::handle item : axes) {
    auto indices = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(item);
    if (!indices || indices.ndim() != 1)
      throw Error(ErrorKind::invalid_argument, "read_points: each axis' coordinates must be a 1-d integer array");
    coordinates.emplace_back(indices.data(), indices.data() + indices.size());
  }
  const std::uint64_t count = coordinates.empty() ? 0 : coordinates.front().size();
  return read_into_new_memory(
      array, [&] { return std::vector<std::uint64_t>{count}; }, shape, device_name, cuda_device, stream, threads,
      progress, [&](const Destination& destination, const Settings& settings) {
        return array.read_points_into(coordinates, destination, settings);
      });
}

}  // namespace

void bind_selection(py::module_& module) {
  py::class_<Array> cls = module.attr("Array");
  cls.def("read_selection", &read_selection, py::arg("axes"), py::arg("shape"), py::arg("device"),
          py::arg("cuda_device"), py::arg("stream"), py::arg("threads"), py::arg("progress"))
      .def("read_selection_into", &read_selection_into, py::arg("axes"), py::arg("data"), py::arg("byte_strides"),
           py::arg("device"), py::arg("cuda_device"), py::arg("stream"), py::arg("threads"), py::arg("progress"))
      .def("read_points", &read_points, py::arg("axes"), py::arg("shape"), py::arg("device"), py::arg("cuda_device"),
           py::arg("stream"), py::arg("threads"), py::arg("progress"));
}

}  // namespace zarrdirect::python
