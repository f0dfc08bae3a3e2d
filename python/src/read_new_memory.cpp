#include "read_new_memory.hpp"

#include <algorithm>

#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "device_array.hpp"
#include "interruptible.hpp"

namespace py = pybind11;

namespace zarrdirect::python {

py::tuple read_into_new_memory(const Array& array, const std::function<std::vector<std::uint64_t>()>& extents_of,
                               const std::optional<std::vector<std::int64_t>>& shape, const std::string& device_name,
                               int cuda_device, std::optional<std::uintptr_t> stream, unsigned threads,
                               const py::object& progress, const ReadIntoNew& read) {
  const Device device = parse_device(device_name);
  const DeviceSpec spec = checked_device(device, cuda_device);
  if (device == Device::cpu) stream.reset();
  const Settings settings = make_settings(threads);
  int run_device = -1;
  if (device == Device::cuda) run_device = cuda_device >= 0 ? cuda_device : current_device();
  NDArray result;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        std::vector<std::uint64_t> extents = extents_of();
        std::uint64_t count = 1;
        for (auto extent : extents) count *= extent;
        Buffer buffer = Buffer::allocate(spec, static_cast<std::size_t>(count * array.metadata().dtype.size));
        Destination destination{buffer.data(), {}, device, stream_pointer(stream), buffer.device_ordinal()};
        ReadStats stats = read(destination, with_progress);
        result = NDArray(std::move(buffer), std::move(extents), array.metadata().dtype, std::move(stats));
      },
      progress, run_device);
  auto out_shape = result_shape(result, shape);
  py::dict stats = stats_to_dict(result.stats());
  if (device == Device::cpu) return py::make_tuple(host_view(std::move(result), out_shape), stats);
  int holder = result.device_ordinal();
  if (holder < 0) holder = std::max(run_device, 0);
  return py::make_tuple(py::cast(DeviceArray(std::move(result), std::move(out_shape), holder, stream)), stats);
}

}  // namespace zarrdirect::python
