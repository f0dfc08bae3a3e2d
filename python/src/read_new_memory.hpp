// The one way the bindings read into new memory (arr[...], arr.oindex[...], arr.vindex[...]):
// the device checked first, a buffer of the read's elements allocated on it, the read run with
// progress and Ctrl-C, then a NumPy view (host) or a DeviceArray (CUDA) of it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "zarrdirect/array.hpp"

namespace zarrdirect::python {

// What a read call does once its memory exists: fills `destination` under `settings`.
using ReadIntoNew = std::function<ReadStats(const Destination& destination, const Settings& settings)>;

// `extents_of` gives the result's extents (called after the device is checked, so a bad device
// is reported before a bad region); `shape`, when given, is how Python sees the elements.
// Returns (data, stats dict).
pybind11::tuple read_into_new_memory(const Array& array, const std::function<std::vector<std::uint64_t>()>& extents_of,
                                     const std::optional<std::vector<std::int64_t>>& shape,
                                     const std::string& device_name, int cuda_device,
                                     std::optional<std::uintptr_t> stream, unsigned threads,
                                     const pybind11::object& progress, const ReadIntoNew& read);

}  // namespace zarrdirect::python
