// _native: many regions at once (read_many, read_many_into), background reads (ReadFuture)
// and the handle's decoded-chunk cache. The Python layer (zarrdirect/_many.py) turns indices into (start, stop)
// pairs and result shapes first.
#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "device_array.hpp"
#include "interruptible.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
using Shape = std::vector<std::int64_t>;

std::vector<Region> regions_of(const std::vector<Pairs>& regions) {
  std::vector<Region> out;
  out.reserve(regions.size());
  for (const auto& pairs : regions) out.push_back(region_from_python(pairs));
  return out;
}

// What the Python caller gets for finished arrays: a list (one per region, in the Python shapes)
// or one stacked batch (leading axis, then the common Python shape); stats as a dict.
struct Conversion {
  Device device = Device::cpu;
  int run_device = -1;
  bool stack = false;
  std::vector<Shape> shapes;  // per region; for a stack, one entry

  py::object one(NDArray array, const Shape& shape) const {
    if (device == Device::cpu) return host_view(std::move(array), shape);
    int holder = device_of_pointer(array.data());
    if (holder < 0) holder = std::max(run_device, 0);
    return py::cast(DeviceArray(std::move(array), shape, holder, std::nullopt));
  }

  py::tuple operator()(std::vector<NDArray> arrays) const {
    py::dict stats = arrays.empty() ? stats_to_dict(ReadStats{}) : stats_to_dict(arrays.front().stats());
    if (stack) {
      Shape shape = shapes.front();
      shape.insert(shape.begin(), static_cast<std::int64_t>(arrays.front().shape().front()));
      return py::make_tuple(one(std::move(arrays.front()), shape), stats);
    }
    py::list list;
    for (std::size_t i = 0; i < arrays.size(); ++i) list.append(one(std::move(arrays[i]), shapes[i]));
    return py::make_tuple(list, stats);
  }
};

Conversion conversion(const std::string& device_name, int cuda_device, bool stack, std::vector<Shape> shapes) {
  Conversion c;
  c.device = parse_device(device_name);
  if (c.device == Device::cuda) c.run_device = cuda_device >= 0 ? cuda_device : current_device();
  c.stack = stack;
  c.shapes = std::move(shapes);
  return c;
}

py::tuple read_many(const Array& array, const std::vector<Pairs>& pairs, std::vector<Shape> shapes,
                    const std::string& device_name, int cuda_device, bool stack, unsigned threads) {
  Conversion convert = conversion(device_name, cuda_device, stack, std::move(shapes));
  std::vector<Region> regions = regions_of(pairs);
  Settings settings = make_settings(threads);
  std::vector<NDArray> arrays;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        if (stack) arrays = {array.read_batch(regions, convert.device, with_progress)};
        else arrays = array.read_many(regions, convert.device, with_progress);
      },
      py::none(), convert.run_device);
  return convert(std::move(arrays));
}

// One destination per region from the Python side's out= targets (pointer and byte strides),
// all of one device kind; a CUDA read runs on the device holding the first (each is checked to
// be on it by the read). Returns the device to run on (-1: host).
int destinations_of(const std::vector<std::uintptr_t>& pointers, const std::vector<Shape>& byte_strides,
                    Device device, int cuda_device, std::optional<std::uintptr_t> stream,
                    std::vector<Destination>& destinations) {
  if (pointers.size() != byte_strides.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("read_many: {} out= pointers but {} stride lists",
                                                         pointers.size(), byte_strides.size()));
  checked_device(device, cuda_device);
  if (device == Device::cpu) stream.reset();
  int run_device = -1;
  if (device == Device::cuda && !pointers.empty())
    run_device = device_for_out(reinterpret_cast<void*>(pointers.front()), cuda_device);
  for (std::size_t i = 0; i < pointers.size(); ++i)
    destinations.push_back({reinterpret_cast<void*>(pointers[i]), byte_strides[i], device, stream_pointer(stream),
                            device == Device::cuda ? run_device : DeviceSpec::kCurrent});
  return run_device;
}

py::dict read_many_into(const Array& array, const std::vector<Pairs>& pairs, const std::vector<std::uintptr_t>& pointers,
                        const std::vector<Shape>& byte_strides, const std::string& device_name, int cuda_device,
                        std::optional<std::uintptr_t> stream, unsigned threads) {
  std::vector<Destination> destinations;
  const int run_device =
      destinations_of(pointers, byte_strides, parse_device(device_name), cuda_device, stream, destinations);
  std::vector<Region> regions = regions_of(pairs);
  Settings settings = make_settings(threads);
  ReadStats stats;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        stats = array.read_many_into(regions, destinations, with_progress);
      },
      py::none(), run_device);
  return stats_to_dict(stats);
}

// A background read as Python sees it: result(timeout), done(), cancel().
class ReadFuture {
 public:
  ReadFuture(ReadHandle handle, Conversion convert) : handle_(std::move(handle)), convert_(std::move(convert)) {}
  // A read into the caller's `out`, kept alive here: result() returns it. Dropping the future
  // before the read has finished cancels the read and waits for it to stop, so that the memory
  // is never freed (by Python) while the read may still write into it.
  ReadFuture(ReadHandle handle, py::object out) : handle_(std::move(handle)), out_(std::move(out)) {}
  ReadFuture(ReadFuture&&) = default;
  ReadFuture(const ReadFuture&) = delete;
  ReadFuture& operator=(const ReadFuture&) = delete;
  ReadFuture& operator=(ReadFuture&&) = delete;
  ~ReadFuture() {
    if (!out_ || handle_.done()) return;
    handle_.cancel();
    py::gil_scoped_release unlocked;  // the read never takes the GIL: no deadlock
    while (!handle_.wait_for(std::chrono::seconds(1))) {
    }
  }

  bool done() const { return handle_.done(); }
  bool cancel() const { return handle_.cancel(); }

  // Waits (GIL released, in slices so that Ctrl-C is seen) up to `timeout` seconds.
  py::tuple result(std::optional<double> timeout) const {
    const auto slice = std::chrono::milliseconds(50);
    const auto deadline = timeout ? std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                           std::chrono::duration<double>(*timeout))
                                  : std::chrono::steady_clock::time_point::max();
    for (;;) {
      bool finished = false;
      {
        py::gil_scoped_release unlocked;
        const auto now = std::chrono::steady_clock::now();
        const auto wait = deadline == std::chrono::steady_clock::time_point::max()
                              ? std::chrono::nanoseconds(slice)
                              : std::min<std::chrono::nanoseconds>(slice, std::max(deadline - now, std::chrono::steady_clock::duration{}));
        finished = handle_.wait_for(wait);
      }
      if (finished) break;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (std::chrono::steady_clock::now() >= deadline) {
        PyErr_SetString(PyExc_TimeoutError, fmt::format("the read did not finish within {} s", *timeout).c_str());
        throw py::error_already_set();
      }
    }
    std::vector<NDArray> arrays;
    ReadStats stats;
    {
      py::gil_scoped_release unlocked;
      // Finished: returns or rethrows at once. A read into out= has its statistics, no arrays.
      if (out_) stats = handle_.stats();
      else arrays = handle_.get();
    }
    if (out_) return py::make_tuple(out_, stats_to_dict(stats));
    return convert_(std::move(arrays));
  }

 private:
  ReadHandle handle_;
  Conversion convert_;
  py::object out_;  // a read into the caller's memory: what result() returns
};

// Starts a background read with `run_device` (>= 0) current on this thread, then restores the
// device that was: the library reads on its own threads and allocates on the device current on
// this one. The GIL is released (resolving regions is quick; submitting may start a thread).
template <typename Start>
ReadHandle start_on(int run_device, Start&& start) {
  const int previous = current_device();
  if (run_device >= 0) set_current_device(run_device);
  ReadHandle handle;
  try {
    py::gil_scoped_release unlocked;
    handle = start();
  } catch (...) {
    set_current_device(previous);
    throw;
  }
  set_current_device(previous);
  return handle;
}

// `single`: one region read by the ordinary reader (read_async), not the batch planner.
ReadFuture read_many_async(const Array& array, const std::vector<Pairs>& pairs, std::vector<Shape> shapes,
                           const std::string& device_name, int cuda_device, bool stack, unsigned threads, bool single) {
  Conversion convert = conversion(device_name, cuda_device, stack, std::move(shapes));
  std::vector<Region> regions = regions_of(pairs);
  Settings settings = make_settings(threads);
  ReadHandle handle = start_on(convert.run_device, [&] {
    if (single && regions.size() == 1 && !stack) return array.read_async(regions.front(), convert.device, settings);
    return array.read_many_async(std::move(regions), convert.device, stack, settings);
  });
  return ReadFuture(std::move(handle), std::move(convert));
}

ReadFuture read_many_into_async(const Array& array, const std::vector<Pairs>& pairs,
                                const std::vector<std::uintptr_t>& pointers, const std::vector<Shape>& byte_strides,
                                const std::string& device_name, int cuda_device, std::optional<std::uintptr_t> stream,
                                unsigned threads, py::object out) {
  std::vector<Destination> destinations;
  const int run_device =
      destinations_of(pointers, byte_strides, parse_device(device_name), cuda_device, stream, destinations);
  std::vector<Region> regions = regions_of(pairs);
  Settings settings = make_settings(threads);
  ReadHandle handle = start_on(
      run_device, [&] { return array.read_many_into_async(std::move(regions), std::move(destinations), settings); });
  return ReadFuture(std::move(handle), std::move(out));
}

py::dict stats_dict(const CacheStats& stats) {
  py::dict d;
  d["capacity_bytes"] = stats.capacity_bytes;
  d["bytes"] = stats.bytes;
  d["entries"] = stats.entries;
  d["hits"] = stats.hits;
  d["misses"] = stats.misses;
  d["evictions"] = stats.evictions;
  d["invalidations"] = stats.invalidations;
  return d;
}

py::dict cache_stats(const Array& array) { return stats_dict(array.cache_stats()); }
py::dict device_cache_stats(const Array& array) { return stats_dict(array.device_cache_stats()); }

}  // namespace

void bind_many(py::module_& module) {
  py::class_<ReadFuture>(module, "ReadFuture", "A read running in the background (the engine side).")
      .def("done", &ReadFuture::done)
      .def("cancel", &ReadFuture::cancel)
      .def("result", &ReadFuture::result, py::arg("timeout"));
  // Module functions taking the Array first, as update_attributes does.
  module.def("read_many", &read_many, py::arg("array"), py::arg("regions"), py::arg("shapes"), py::arg("device"),
             py::arg("cuda_device"), py::arg("stack"), py::arg("threads"));
  module.def("read_many_async", &read_many_async, py::arg("array"), py::arg("regions"), py::arg("shapes"),
             py::arg("device"), py::arg("cuda_device"), py::arg("stack"), py::arg("threads"), py::arg("single"));
  module.def("read_many_into", &read_many_into, py::arg("array"), py::arg("regions"), py::arg("pointers"),
             py::arg("byte_strides"), py::arg("device"), py::arg("cuda_device"), py::arg("stream"), py::arg("threads"));
  module.def("read_many_into_async", &read_many_into_async, py::arg("array"), py::arg("regions"), py::arg("pointers"),
             py::arg("byte_strides"), py::arg("device"), py::arg("cuda_device"), py::arg("stream"), py::arg("threads"),
             py::arg("out"));
  module.def("set_cache_bytes", [](const Array& self, std::size_t bytes) { self.set_cache_bytes(bytes); },
             py::arg("array"), py::arg("bytes"));
  module.def("cache_stats", &cache_stats, py::arg("array"));
  module.def("set_device_cache_bytes", [](const Array& self, std::size_t bytes) { self.set_device_cache_bytes(bytes); },
             py::arg("array"), py::arg("bytes"));
  module.def("device_cache_stats", &device_cache_stats, py::arg("array"));
}

}  // namespace zarrdirect::python
