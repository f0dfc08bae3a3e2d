// The write side of _native: creating arrays and groups, and writing regions from host or
// device memory. The Python layer (zarrdirect/_write.py) turns options into JSON and values into
// pointers and byte strides; what arrives here is plain numbers and text.
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "interruptible.hpp"
#include "zarrdirect/codec_spec.hpp"
#include "zarrdirect/group.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

nlohmann::json parse_json(const std::string& text, std::string_view what) {
  auto value = nlohmann::json::parse(text, nullptr, false);
  if (value.is_discarded()) throw Error(ErrorKind::invalid_argument, fmt::format("{} is not valid JSON", what));
  return value;
}

// The layout of zarrdirect.create(): {"shape", "typestr", "chunks", "shards", "codec",
// "level", "zarr_format", "fill_value", "attributes", "dimension_names"}.
ArrayLayout layout_from_json(const nlohmann::json& options) {
  ArrayLayout layout;
  layout.shape = options.at("shape").get<std::vector<std::uint64_t>>();
  auto typestr = parse_numpy_typestr(options.at("typestr").get<std::string>());
  layout.dtype = typestr.type;
  if (options.contains("chunks") && !options["chunks"].is_null())
    layout.chunks = options["chunks"].get<std::vector<std::uint64_t>>();
  if (options.contains("shards") && !options["shards"].is_null())
    layout.shards = options["shards"].get<std::vector<std::uint64_t>>();
  const auto& codec = options.at("codec");
  layout.codec = codec.is_string() ? codec.get<std::string>() : codec.dump();
  if (options.contains("level") && !options["level"].is_null()) layout.level = options["level"].get<int>();
  layout.zarr_format = options.value("zarr_format", 3);
  layout.fill_value = options.value("fill_value", nlohmann::json(0));
  if (options.contains("attributes") && !options["attributes"].is_null()) layout.attributes = options["attributes"];
  if (options.contains("dimension_names") && !options["dimension_names"].is_null())
    for (const auto& name : options["dimension_names"])
      layout.dimension_names.push_back(name.is_null() ? std::nullopt : std::optional<std::string>(name.get<std::string>()));
  return layout;
}

// zarrdirect.create()'s "order" and "filters" in the metadata document. v2: the .zarray members
// themselves. v3: order "F" is a transpose codec reversing the axes, first in the chain (inside
// the shards for a sharded array, so that they stay shards zarrdirect updates in part); filters
// are a v2 notion there (v3 takes them as codecs), refused.
void apply_order_and_filters(nlohmann::json& document, const nlohmann::json& options) {
  const std::string order = options.value("order", std::string("C"));
  if (order != "C" && order != "F")
    throw Error(ErrorKind::invalid_argument, fmt::format("order must be \"C\" or \"F\", not {}", nlohmann::json(order).dump()));
  nlohmann::json filters = options.value("filters", nlohmann::json());
  if (!filters.is_null() && !filters.is_array())
    throw Error(ErrorKind::invalid_argument, "filters must be a list of codec configurations");
  if (filters.is_array() && filters.empty()) filters = nullptr;
  if (document.value("zarr_format", 3) == 2) {
    document["order"] = order;
    if (!filters.is_null()) {
      for (const auto& filter : filters)
        if (!filter.is_object() || !filter.contains("id") || !filter["id"].is_string())
          throw Error(ErrorKind::invalid_argument,
                      fmt::format("filter {} is not a numcodecs configuration (an object with an \"id\")",
                                  filter.dump().substr(0, 80)));
      document["filters"] = filters;
    }
    return;
  }
  if (!filters.is_null())
    throw Error(ErrorKind::invalid_argument,
                "filters= is a zarr_format 2 option; for zarr_format 3 give them as codecs (codec=[...])");
  if (order == "C") return;
  const std::size_t rank = document.at("shape").size();
  nlohmann::json axes = nlohmann::json::array();
  for (std::size_t d = rank; d-- > 0;) axes.push_back(d);
  const nlohmann::json transpose = {{"name", "transpose"}, {"configuration", {{"order", axes}}}};
  nlohmann::json& outer = document["codecs"];
  nlohmann::json& codecs = outer.size() == 1 && outer[0].value("name", "") == "sharding_indexed"
                               ? outer[0]["configuration"]["codecs"]
                               : outer;
  codecs.insert(codecs.begin(), transpose);
}

Array create_array(const std::string& path, const std::string& options_json, bool overwrite) {
  nlohmann::json document;
  try {
    nlohmann::json options = parse_json(options_json, "create options");
    document = make_array_metadata(layout_from_json(options));
    apply_order_and_filters(document, options);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::invalid_argument, fmt::format("create options: {}", e.what()));
  }
  py::gil_scoped_release release;
  return Array::create(path, document, overwrite);
}

Array create_array_from_metadata(const std::string& path, const std::string& metadata_json, bool overwrite) {
  nlohmann::json document = parse_json(metadata_json, "array metadata");
  py::gil_scoped_release release;
  return Array::create(path, document, overwrite);
}

void create_group(const std::string& path, int zarr_format, const std::string& attributes_json, bool overwrite) {
  nlohmann::json attributes = parse_json(attributes_json, "group attributes");
  py::gil_scoped_release release;
  Group::create(path, zarr_format, attributes, overwrite);
}

py::dict write(const Array& array, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& pairs, std::uintptr_t data,
               const std::vector<std::int64_t>& byte_strides, const std::string& device_name,
               std::optional<std::uintptr_t> stream, unsigned threads, bool durable, bool write_empty_chunks,
               const py::object& progress) {
  Device device = Device::cpu;
  if (device_name == "cuda") device = Device::cuda;
  else if (device_name != "cpu")
    throw Error(ErrorKind::invalid_argument, fmt::format("device must be \"cpu\" or \"cuda\", not \"{}\"", device_name));
  auto* pointer = reinterpret_cast<const void*>(data);
  int run_device = -1;
  if (device == Device::cuda) {
    run_device = device_of_pointer(pointer);
    if (run_device < 0) run_device = current_device();
  }
  Region region = region_from_python(pairs);
  Settings settings = Settings::from_environment();
  if (threads > 0) settings.threads = threads;
  WriteSettings options;
  options.durable = durable;
  options.write_empty_chunks = write_empty_chunks;
  WriteStats stats;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        Source source;
        source.data = pointer;
        source.byte_strides = byte_strides;
        source.device = device;
        source.cuda_stream = stream_pointer(stream);
        stats = array.write(region, source, options, with_progress);
      },
      progress, run_device);
  py::dict out;
  out["chunks_total"] = stats.chunks_total;
  out["chunks_merged"] = stats.chunks_merged;
  out["chunks_empty"] = stats.chunks_empty;
  out["files_written"] = stats.files_written;
  out["files_erased"] = stats.files_erased;
  out["bytes_written"] = stats.bytes_written;
  out["threads"] = stats.threads;
  return out;
}

// Saves a change of attributes (see Array::update_attributes); `replace`: `set_json` is the
// whole new mapping.
void update_array_attributes(Array& array, const std::string& set_json, const std::vector<std::string>& remove,
                             bool replace) {
  nlohmann::json set = parse_json(set_json, "attributes");
  py::gil_scoped_release release;
  if (replace) array.set_attributes(set);
  else array.update_attributes(set, remove);
}

py::object update_group_attributes(Group& group, const std::string& set_json, const std::vector<std::string>& remove,
                                   bool replace) {
  nlohmann::json set = parse_json(set_json, "attributes");
  {
    py::gil_scoped_release release;
    if (replace) group.set_attributes(set);
    else group.update_attributes(set, remove);
  }
  return to_python(group.attributes());
}

// Array::resize, the GIL released (it may rewrite edge chunks).
void resize_array(Array& array, const std::vector<std::uint64_t>& shape, bool durable) {
  WriteSettings options;
  options.durable = durable;
  py::gil_scoped_release release;
  array.resize(shape, options);
}

}  // namespace

void bind_write(py::module_& module) {
  module.def("resize", &resize_array, py::arg("array"), py::arg("shape"), py::arg("durable"),
             "Changes the array's shape in place (Array::resize); the array's metadata then holds it.");
  module.def("update_attributes", &update_array_attributes, py::arg("array"), py::arg("set_json"), py::arg("remove"),
             py::arg("replace"),
             "Saves a change of an array's attributes (zarr.json or .zattrs, atomically); the array's metadata "
             "then holds them.");
  module.def("update_group_attributes", &update_group_attributes, py::arg("group"), py::arg("set_json"),
             py::arg("remove"), py::arg("replace"), "The same for a group; returns the attributes saved.");
  module.def("create_array", &create_array, py::arg("path"), py::arg("options_json"), py::arg("overwrite"),
             "Creates an array from zarrdirect.create()'s options (JSON); returns the open Array.");
  module.def("create_array_from_metadata", &create_array_from_metadata, py::arg("path"), py::arg("metadata_json"),
             py::arg("overwrite"), "Creates an array from a zarr.json or .zarray document (JSON).");
  module.def("create_group", &create_group, py::arg("path"), py::arg("zarr_format"), py::arg("attributes_json"),
             py::arg("overwrite"), "Creates a group (v3 zarr.json or v2 .zgroup).");
  module.def("write", &write, py::arg("array"), py::arg("region"), py::arg("data"), py::arg("byte_strides"),
             py::arg("device"), py::arg("stream"), py::arg("threads"), py::arg("durable"),
             py::arg("write_empty_chunks"), py::arg("progress"),
             "Writes host or device memory (pointer, byte strides) into a region of the array.");
  module.def(
      "codecs_from_spec",
      [](const std::string& spec, const std::string& typestr, int zarr_format, std::optional<int> level) {
        DataType dtype = parse_numpy_typestr(typestr).type;
        return to_python(zarr_format == 2 ? v2_compressor_from_spec(spec, dtype, level)
                                          : v3_codecs_from_spec(spec, dtype, level));
      },
      py::arg("spec"), py::arg("typestr"), py::arg("zarr_format") = 3, py::arg("level") = py::none(),
      "The zarr.json codecs (v3) or .zarray compressor (v2) for a codec spec such as \"zstd:3\".");
}

}  // namespace zarrdirect::python
