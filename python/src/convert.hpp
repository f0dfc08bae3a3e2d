// Conversions between the library's types and Python objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "zarrdirect/array.hpp"

namespace zarrdirect::python {

// A JSON value as the equivalent Python object (dict, list, str, int, float, bool, None).
pybind11::object to_python(const nlohmann::json& value);

// Everything the Python Array needs to know about an array's metadata, as JSON.
nlohmann::json describe_metadata(const ArrayMetadata& metadata);

pybind11::dict stats_to_dict(const ReadStats& stats);

// Regions arrive from Python as a list of (start, stop) pairs; an empty list is the whole array.
Region region_from_python(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& pairs);

// The shape a result is handed out with: `shape` when given (dimensions that integer indices
// dropped, or new axes), else the read's own. Must hold as many elements as the read.
std::vector<std::int64_t> result_shape(const NDArray& array, const std::optional<std::vector<std::int64_t>>& shape);

// A NumPy array viewing a host result's memory, no copy: its base is a capsule owning a copy of
// the NDArray (which shares the buffer), so the memory lives while any view of it does.
pybind11::array host_view(NDArray array, const std::vector<std::int64_t>& shape);

// The `device` argument the Python layer passes ("cpu" or "cuda"); Error(invalid_argument) else.
Device parse_device(const std::string& text);
// The device a call works on, checked (an ordinal this machine lacks: invalid_argument naming
// it and the count) before a helper thread switches to it. `cuda_device` -1: the current one.
DeviceSpec checked_device(Device device, int cuda_device);
// Settings from the environment with `threads` (0: the default) applied.
Settings make_settings(unsigned threads);
// A cudaStream_t handed over from Python as an integer (absent: null, the library's streams).
void* stream_pointer(std::optional<std::uintptr_t> stream);

}  // namespace zarrdirect::python
