#include "convert.hpp"

#include <utility>
#include <vector>

#include <fmt/format.h>

namespace py = pybind11;

namespace zarrdirect::python {

namespace {

// A JSON value that holds no other values, as its Python equivalent. NaN and infinities (which a
// lenient parser may keep in attributes) become the float they are.
py::object scalar_to_python(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::binary: {
      const auto& bytes = value.get_binary();
      return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    default:
      return py::none();
  }
}

// An empty dict or list for a container value, to be filled later; the scalar itself otherwise.
py::object shell_of(const nlohmann::json& value) {
  if (value.is_object()) return py::dict();
  if (value.is_array()) return py::list();
  return scalar_to_python(value);
}

}  // namespace

py::object to_python(const nlohmann::json& value) {
  // Iterative, not recursive: attributes may nest as deep as the metadata parser allows (hundreds
  // of levels), which a recursive conversion -- json.loads included -- turns into a RecursionError
  // or a C stack overflow. Each container is created empty, linked into its parent, and filled
  // when its turn on the work list comes; order within a container is kept because every child is
  // inserted while its parent is being filled.
  py::object root = shell_of(value);
  std::vector<std::pair<const nlohmann::json*, py::object>> pending;
  if (value.is_object() || value.is_array()) pending.emplace_back(&value, root);
  while (!pending.empty()) {
    auto [node, target] = std::move(pending.back());
    pending.pop_back();
    if (node->is_object()) {
      py::dict dict = py::reinterpret_borrow<py::dict>(target);
      for (const auto& [key, child] : node->items()) {
        py::object item = shell_of(child);
        dict[py::str(key)] = item;
        if (child.is_object() || child.is_array()) pending.emplace_back(&child, item);
      }
    } else {
      py::list list = py::reinterpret_borrow<py::list>(target);
      for (const auto& child : *node) {
        py::object item = shell_of(child);
        list.append(item);
        if (child.is_object() || child.is_array()) pending.emplace_back(&child, item);
      }
    }
  }
  return root;
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
  out["io_engine"] = stats.io_engine;
  out["threads"] = stats.threads;
  out["chunks_decoded"] = stats.chunks_decoded;
  out["cache_hits"] = stats.cache_hits;
  py::dict calls;
  calls["copies"] = stats.cuda_calls.copies;
  calls["memsets"] = stats.cuda_calls.memsets;
  calls["kernel_launches"] = stats.cuda_calls.kernel_launches;
  calls["event_records"] = stats.cuda_calls.event_records;
  calls["stream_waits"] = stats.cuda_calls.stream_waits;
  calls["synchronizations"] = stats.cuda_calls.synchronizations;
  calls["total"] = stats.cuda_calls.total();
  out["cuda_calls"] = calls;
  out["pinned_allocations"] = stats.pinned_allocations;
  out["chunks_decoded_gpu"] = stats.chunks_decoded_gpu;
  out["chunks_decoded_cpu"] = stats.chunks_decoded_cpu;
  out["bytes_decoded_gpu"] = stats.bytes_decoded_gpu;
  out["bytes_decoded_cpu"] = stats.bytes_decoded_cpu;
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

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu;
  if (text == "cuda") return Device::cuda;
  throw Error(ErrorKind::invalid_argument, fmt::format("device must be \"cpu\" or \"cuda\", not \"{}\"", text));
}

DeviceSpec checked_device(Device device, int cuda_device) {
  const DeviceSpec spec = device == Device::cuda ? DeviceSpec(Device::cuda, cuda_device) : DeviceSpec(Device::cpu);
  check_device(spec);
  return spec;
}

Settings make_settings(unsigned threads) {
  Settings settings = Settings::from_environment();
  if (threads > 0) settings.threads = threads;
  return settings;
}

void* stream_pointer(std::optional<std::uintptr_t> stream) {
  return stream ? reinterpret_cast<void*>(*stream) : nullptr;
}

}  // namespace zarrdirect::python
