#include "convert.hpp"

#include <fmt/format.h>

namespace py = pybind11;

namespace zarrdirect::python {

py::object to_python(const nlohmann::json& value) {
  // NaN and infinities are not JSON; the library keeps such fill values as strings ("NaN"),
  // so dump() never meets one.
  // Not cached in a static: its destructor would run after the interpreter is gone.
  return py::module_::import("json").attr("loads")(value.dump());
}

nlohmann::json describe_metadata(const ArrayMetadata& metadata) {
  nlohmann::json dimension_names = nullptr;
  if (!metadata.dimension_names.empty()) {
    dimension_names = nlohmann::json::array();
    for (const auto& name : metadata.dimension_names)
      dimension_names.push_back(name ? nlohmann::json(*name) : nlohmann::json(nullptr));
  }
  const auto& encoding = metadata.chunk_key_encoding;
  return {
      {"zarr_format", metadata.zarr_format},
      {"shape", metadata.shape},
      {"chunks", metadata.chunk_shape},
      {"chunk_grid_shape", metadata.chunk_grid_shape()},
      {"num_chunks", metadata.num_chunks()},
      {"data_type", metadata.dtype.name()},
      {"typestr", metadata.dtype.numpy_typestr()},
      {"fill_value", metadata.fill_value_json},
      {"codecs", metadata.codecs},
      {"chunk_key_encoding",
       {{"name", encoding.kind == ChunkKeyEncoding::Kind::v2 ? "v2" : "default"},
        {"separator", std::string(1, encoding.separator)}}},
      {"dimension_names", dimension_names},
      {"attributes", metadata.attributes},
  };
}

py::dict stats_to_dict(const ReadStats& stats) {
  py::dict out;
  out["chunks_total"] = stats.chunks_total;
  out["chunks_missing"] = stats.chunks_missing;
  out["bytes_read"] = stats.bytes_read;
  out["bytes_out"] = stats.bytes_out;
  out["io_path"] = stats.io_path;
  out["threads"] = stats.threads;
  return out;
}

Region region_from_python(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& pairs) {
  Region region;
  region.reserve(pairs.size());
  for (const auto& [start, stop] : pairs) region.push_back({start, stop});
  return region;
}

std::vector<std::int64_t> result_shape(const NDArray& array, const std::optional<std::vector<std::int64_t>>& shape) {
  std::uint64_t read_count = 1;
  std::vector<std::int64_t> own;
  for (auto extent : array.shape()) {
    read_count *= extent;
    own.push_back(static_cast<std::int64_t>(extent));
  }
  if (!shape) return own;
  std::uint64_t count = 1;
  for (auto extent : *shape) {
    if (extent < 0) throw Error(ErrorKind::invalid_argument, "result shape has a negative extent");
    count *= static_cast<std::uint64_t>(extent);
  }
  if (count != read_count)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("result shape holds {} elements, the region read holds {}", count, read_count));
  return *shape;
}

py::array host_view(NDArray array, const std::vector<std::int64_t>& shape) {
  auto* owner = new NDArray(std::move(array));
  py::capsule base(owner, [](void* pointer) { delete static_cast<NDArray*>(pointer); });
  std::vector<py::ssize_t> extents(shape.begin(), shape.end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = owner->dtype().size;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<py::ssize_t>(extents[d], 1);
  }
  return py::array(py::dtype(owner->dtype().numpy_typestr()), extents, strides, owner->data(), base);
}

}  // namespace zarrdirect::python
