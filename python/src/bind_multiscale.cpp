// zarrdirect.write_multiscale's engine side: options arrive as JSON, data as a pointer (host or
// device) with shape and typestr, or as an open Array read slab by slab.
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "cuda_runtime.hpp"
#include "interruptible.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

// {"levels", "method", "downsample", "ngff", "axes", "units", "scale", "translation", "name",
//  "chunks", "shards", "codec", "level", "overwrite", "slab_bytes", "durable"}
MultiscaleWriteOptions options_from_json(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    throw Error(ErrorKind::invalid_argument, "write_multiscale options are not a JSON object");
  try {
    MultiscaleWriteOptions options;
    options.levels = json.value("levels", std::size_t{4});
    options.method = parse_downsample_method(json.value("method", std::string("mean")));
    const std::string downsample = json.value("downsample", std::string("yx"));
    if (downsample != "yx" && downsample != "zyx")
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("downsample must be \"yx\" or \"zyx\", not {}", nlohmann::json(downsample.substr(0, 20)).dump()));
    options.downsample_dims = downsample == "zyx" ? 3 : 2;
    options.ngff = json.value("ngff", std::string("0.4"));
    auto list = [&](const char* key, auto& out) {
      if (json.contains(key) && !json[key].is_null()) json[key].get_to(out);
    };
    list("axes", options.axes);
    list("units", options.units);
    list("scale", options.scale);
    list("translation", options.translation);
    list("chunks", options.chunks);
    list("shards", options.shards);
    options.name = json.value("name", std::string());
    const auto& codec = json.at("codec");
    options.codec = codec.is_string() ? codec.get<std::string>() : codec.dump();
    if (json.contains("level") && !json["level"].is_null()) options.codec_level = json["level"].get<int>();
    options.overwrite = json.value("overwrite", false);
    options.slab_bytes = json.value("slab_bytes", std::size_t{0});
    options.write.durable = json.value("durable", false);
    return options;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::invalid_argument, fmt::format("write_multiscale options: {}", e.what()));
  }
}

py::dict stats_to_python(const MultiscaleWriteStats& stats) {
  py::list levels;
  for (const auto& level : stats.levels) {
    py::dict item;
    item["path"] = level.path;
    item["shape"] = py::tuple(py::cast(level.shape));
    item["scale"] = level.scale;
    item["translation"] = level.translation;
    levels.append(item);
  }
  py::dict out;
  out["levels"] = levels;
  out["bytes_written"] = stats.bytes_written;
  out["chunks_merged"] = stats.chunks_merged;
  out["slabs"] = stats.slabs;
  out["slab_rows"] = stats.slab_rows;
  out["peak_buffer_bytes"] = stats.peak_buffer_bytes;
  out["read_seconds"] = stats.read_seconds;
  out["pyramid_seconds"] = stats.pyramid_seconds;
  out["read_wait_seconds"] = stats.read_wait_seconds;
  return out;
}

py::dict write_from_memory(const std::string& path, const std::string& options_json, std::uintptr_t data,
                           const std::vector<std::uint64_t>& shape, const std::string& typestr,
                           const std::string& device_name, std::optional<std::uintptr_t> stream, unsigned threads,
                           const py::object& progress) {
  MultiscaleWriteOptions options = options_from_json(options_json);
  Source source;
  source.data = reinterpret_cast<const void*>(data);
  source.shape = shape;
  source.dtype = parse_numpy_typestr(typestr).type;
  source.device = device_name == "cuda" ? Device::cuda : Device::cpu;
  source.cuda_stream = stream_pointer(stream);
  int run_device = -1;
  if (source.device == Device::cuda) {
    run_device = device_of_pointer(source.data);
    if (run_device < 0) run_device = current_device();
  }
  Settings settings = Settings::from_environment();
  if (threads > 0) settings.threads = threads;
  MultiscaleWriteStats stats;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        stats = write_multiscale(path, source, options, with_progress);
      },
      progress, run_device);
  return stats_to_python(stats);
}

py::dict write_from_array(const std::string& path, const std::string& options_json, const Array& array,
                          const std::string& device_name, unsigned threads, const py::object& progress) {
  MultiscaleWriteOptions options = options_from_json(options_json);
  const Device device = device_name == "cuda" ? Device::cuda : Device::cpu;
  Settings settings = Settings::from_environment();
  if (threads > 0) settings.threads = threads;
  MultiscaleWriteStats stats;
  run_interruptible(
      [&](const ProgressCallback& callback) {
        Settings with_progress = settings;
        with_progress.progress = callback;
        stats = write_multiscale(path, array, options, device, with_progress);
      },
      progress, device == Device::cuda ? current_device() : -1);
  return stats_to_python(stats);
}

}  // namespace

void bind_multiscale(py::module_& module) {
  module.def("write_multiscale", &write_from_memory, py::arg("path"), py::arg("options_json"), py::arg("data"),
             py::arg("shape"), py::arg("typestr"), py::arg("device"), py::arg("stream"), py::arg("threads"),
             py::arg("progress"),
             "Writes an OME-Zarr pyramid of C-contiguous host or device memory (pointer, shape, typestr).");
  module.def("write_multiscale_from_array", &write_from_array, py::arg("path"), py::arg("options_json"),
             py::arg("array"), py::arg("device"), py::arg("threads"), py::arg("progress"),
             "Writes an OME-Zarr pyramid of an array on storage, read slab by slab.");
}

}  // namespace zarrdirect::python
