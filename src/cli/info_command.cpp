#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/open_target.hpp"
#include "zarrdirect/system.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect::cli {
namespace {

struct InfoOptions {
  std::string path;
  bool json = false;
  bool system = false;
};

bool is_metadata_file(const std::filesystem::path& file) {
  auto name = file.filename().string();
  return name == "zarr.json" || name == ".zarray" || name == ".zattrs" || name == ".zgroup" || name == ".zmetadata";
}

nlohmann::json describe_array(const Array& array) {
  const auto& m = array.metadata();
  std::uint64_t stored = 0, bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(array.path(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    bytes += it->file_size(ec);
    if (!is_metadata_file(it->path())) ++stored;
  }
  nlohmann::json codecs = nlohmann::json::array();
  for (const auto& codec : m.codecs) codecs.push_back(codec["name"]);
  std::uint64_t chunks = m.num_chunks();
  nlohmann::json doc = {{"path", array.path().string()},
                        {"zarr_format", m.zarr_format},
                        {"shape", m.shape},
                        {"dtype", m.dtype.name()},
                        {"chunk_shape", m.chunk_shape},
                        {"codecs", codecs},
                        {"codec_chain", m.codecs},
                        {"fill_value", m.fill_value_json},
                        {"chunks", chunks},
                        {"chunks_stored", stored},
                        {"chunks_missing", chunks > stored ? chunks - stored : 0},
                        {"bytes_on_disk", bytes},
                        {"bytes_decoded", m.num_elements() * m.dtype.size}};
  if (!m.dimension_names.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& name : m.dimension_names) names.push_back(name ? nlohmann::json(*name) : nlohmann::json());
    doc["dimension_names"] = names;
  }
  for (const auto& codec : m.codecs)
    if (codec["name"] == "sharding_indexed") doc["inner_chunk_shape"] = codec["configuration"]["chunk_shape"];
  return doc;
}

void print_array(const nlohmann::json& doc) {
  fmt::print("path:           {}\n", doc["path"].get<std::string>());
  fmt::print("format:         zarr v{}\n", doc["zarr_format"].get<int>());
  fmt::print("shape:          {}\n", doc["shape"].dump());
  fmt::print("dtype:          {}\n", doc["dtype"].get<std::string>());
  fmt::print("chunk shape:    {}\n", doc["chunk_shape"].dump());
  if (doc.contains("inner_chunk_shape")) fmt::print("inner chunks:   {}\n", doc["inner_chunk_shape"].dump());
  fmt::print("codecs:         {}\n", doc["codec_chain"].dump());
  fmt::print("fill value:     {}\n", doc["fill_value"].dump());
  if (doc.contains("dimension_names")) fmt::print("dimensions:     {}\n", doc["dimension_names"].dump());
  fmt::print("chunks:         {} ({} stored, {} missing)\n", doc["chunks"].get<std::uint64_t>(),
             doc["chunks_stored"].get<std::uint64_t>(), doc["chunks_missing"].get<std::uint64_t>());
  fmt::print("bytes on disk:  {}\n", doc["bytes_on_disk"].get<std::uint64_t>());
  fmt::print("bytes decoded:  {}\n", doc["bytes_decoded"].get<std::uint64_t>());
}

// A group: its members and, for an OME-Zarr image, the pyramid.
nlohmann::json describe_group(const std::string& path) {
  Group group = Group::open(path);
  nlohmann::json doc = {{"path", path}, {"node_type", "group"}, {"zarr_format", group.zarr_format()},
                        {"members", group.members()}};
  try {
    Multiscale image = Multiscale::open(path);
    nlohmann::json levels = nlohmann::json::array();
    for (std::size_t i = 0; i < image.levels().size(); ++i) {
      Array level = image.open_level(i);
      levels.push_back({{"level", i}, {"path", image.levels()[i].path}, {"shape", level.metadata().shape},
                        {"chunk_shape", level.metadata().chunk_shape}, {"dtype", level.metadata().dtype.name()},
                        {"scale", image.levels()[i].scale}, {"translation", image.levels()[i].translation}});
    }
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& axis : image.axes()) axes.push_back({{"name", axis.name}, {"type", axis.type}, {"unit", axis.unit}});
    doc["multiscale"] = {{"version", image.version()}, {"name", image.name()}, {"axes", axes}, {"levels", levels}};
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_metadata) throw;  // a plain group: no pyramid to show
  }
  return doc;
}

void print_group(const nlohmann::json& doc) {
  fmt::print("path:           {}\n", doc["path"].get<std::string>());
  fmt::print("group:          zarr v{}, members {}\n", doc["zarr_format"].get<int>(), doc["members"].dump());
  if (!doc.contains("multiscale")) return;
  const auto& image = doc["multiscale"];
  std::string axes;
  for (const auto& axis : image["axes"]) axes += axis["name"].get<std::string>() + " ";
  fmt::print("OME-Zarr:       version {}, axes {}\n", image["version"].get<std::string>(), axes);
  for (const auto& level : image["levels"])
    fmt::print("  level {}: {:<6} shape {} chunks {} {} scale {}\n", level["level"].get<int>(),
               level["path"].get<std::string>(), level["shape"].dump(), level["chunk_shape"].dump(),
               level["dtype"].get<std::string>(), level["scale"].dump());
}

}  // namespace

Run add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  auto* sub = app.add_subcommand("info", "Describe an array (or, with --system, this machine's GPU I/O paths)");
  sub->add_option("path", options->path, "Array folder");
  sub->add_flag("--json", options->json, "Print JSON");
  sub->add_flag("--system", options->system, "Show CUDA, GDS and the I/O path reads will take");
  return [options]() {
    if (options->system) {
      auto doc = describe_system();
      doc["codecs"] = supported_codecs();
      if (options->json) fmt::print("{}\n", doc.dump(2));
      else print_system(doc);
      return 0;
    }
    if (options->path.empty()) throw Error(ErrorKind::invalid_argument, "info: a PATH is required (or --system)");
    if (is_group_folder(options->path)) {
      auto doc = describe_group(options->path);
      if (options->json) fmt::print("{}\n", doc.dump(2));
      else print_group(doc);
      return 0;
    }
    auto doc = describe_array(Array::open(options->path));
    if (options->json) fmt::print("{}\n", doc.dump(2));
    else print_array(doc);
    return 0;
  };
}

}  // namespace zarrdirect::cli
