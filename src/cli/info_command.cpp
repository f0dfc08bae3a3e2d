// `zarrdirect info PATH`: what an array or group is. The array's JSON is zarrdirect::describe()
// (the schema Python's Array.info returns too); the text shows the same for people: sizes in
// binary units, one codec a line, every string from the data escaped onto its line.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/open_target.hpp"
#include "cli/printable.hpp"
#include "cli/store_flags.hpp"
#include "cli/text.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/describe.hpp"
#include "zarrdirect/group.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect::cli {
namespace {

struct InfoOptions {
  std::string path;
  bool json = false;
  bool system = false;
};

// Paths from the file system need not be UTF-8: replaced, not thrown at, when printed as JSON.
void print_json(const nlohmann::json& doc) {
  fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

// A JSON value on one line for the text display, shortened.
std::string compact(const nlohmann::json& value, std::size_t max_bytes = 200) {
  return printable_line(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_bytes);
}

std::string shape_text(const nlohmann::json& shape) {
  std::vector<std::string> extents;
  for (const auto& extent : shape) extents.push_back(extent.dump());
  return fmt::format("[{}]", fmt::join(extents, ", "));
}

void print_array(const nlohmann::json& doc, const StorageSummary& stored) {
  const auto line = [](std::string_view label, std::string_view value) { fmt::print("{:<16}{}\n", label, value); };
  line("path:", printable_line(doc["path"].get<std::string>()));
  line("format:", fmt::format("zarr v{} array", doc["zarr_format"].get<int>()));
  line("shape:", shape_text(doc["shape"]));
  line("dtype:", doc["dtype"].get<std::string>());
  line("chunks:", shape_text(doc["chunks"]));
  if (!doc["shards"].is_null()) line("shards:", shape_text(doc["shards"]));
  line("order:", doc["order"].get<std::string>());
  line("fill value:", compact(doc["fill_value"]));
  const auto codecs = codec_lines(doc["codecs"]);
  for (std::size_t i = 0; i < codecs.size(); ++i) line(i == 0 ? "codecs:" : "", codecs[i]);
  if (!doc["dimension_names"].is_null()) line("dimensions:", compact(doc["dimension_names"]));
  if (!doc["attributes"].empty()) line("attributes:", compact(doc["attributes"]));
  const std::uint64_t total = stored.chunks_total;
  std::string chunks = fmt::format("{} of {} stored ({} missing: read as the fill value)", stored.chunks_stored, total,
                                   total - std::min(total, stored.chunks_stored + stored.chunks_refused));
  if (stored.chunks_refused)
    chunks += fmt::format("; {} refused (links out of the folder, or not regular files)", stored.chunks_refused);
  line(doc["shards"].is_null() ? "chunk files:" : "shard files:", chunks);
  line("bytes stored:", human_size(stored.bytes_stored));
  line("size in memory:", human_size(doc["nbytes"].get<std::uint64_t>()));
}

// A group: its members and, for an OME-Zarr image, the pyramid.
nlohmann::json describe_group(const Group& group, const std::string& path) {
  nlohmann::json doc = {{"path", path}, {"node_type", "group"}, {"zarr_format", group.zarr_format()},
                        {"members", group.members()}, {"attributes", group.attributes()}};
  try {
    Multiscale image = Multiscale::open(path, store_flags());
    nlohmann::json levels = nlohmann::json::array();
    for (std::size_t i = 0; i < image.levels().size(); ++i) {
      nlohmann::json level = {{"level", i}, {"path", image.levels()[i].path}, {"scale", image.levels()[i].scale},
                              {"translation", image.levels()[i].translation}};
      try {
        const ArrayMetadata m = image.level_metadata(i);
        level.update({{"shape", m.shape}, {"chunk_shape", m.chunk_shape}, {"dtype", m.dtype.name()}});
      } catch (const Error& e) {
        level["error"] = e.what();  // one broken level must not hide the others
      }
      levels.push_back(std::move(level));
    }
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& axis : image.axes()) axes.push_back({{"name", axis.name}, {"type", axis.type}, {"unit", axis.unit}});
    doc["multiscale"] = {{"version", image.version()}, {"name", image.name()}, {"axes", axes}, {"levels", levels}};
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_metadata) throw;
    // A plain group has no pyramid to show; an image whose multiscales metadata is broken was
    // shown as one, silently: say what is broken.
    if (std::string_view(e.what()).find("no OME-Zarr \"multiscales\" attribute") == std::string_view::npos)
      doc["multiscale_error"] = e.what();
  }
  return doc;
}

void print_group(const nlohmann::json& doc) {
  const auto line = [](std::string_view label, std::string_view value) { fmt::print("{:<16}{}\n", label, value); };
  line("path:", printable_line(doc["path"].get<std::string>()));
  line("format:", fmt::format("zarr v{} group", doc["zarr_format"].get<int>()));
  std::vector<std::string> members;
  for (const auto& member : doc["members"]) members.push_back(member.get<std::string>());
  line("members:", members.empty() ? "(none)" : printable_line(fmt::format("{}", fmt::join(members, ", "))));
  if (doc.contains("multiscale_error"))
    line("OME-Zarr:", "unreadable: " + printable_line(doc["multiscale_error"].get<std::string>(), 300));
  if (!doc.contains("multiscale")) return;
  const auto& image = doc["multiscale"];
  std::vector<std::string> axes;
  for (const auto& axis : image["axes"]) axes.push_back(axis["name"].get<std::string>());
  line("OME-Zarr:", printable_line(fmt::format("version {}, axes {}", image["version"].get<std::string>(),
                                               fmt::join(axes, " "))));
  for (const auto& level : image["levels"]) {
    const std::string path = printable_line(level["path"].get<std::string>(), 100);
    if (level.contains("error"))
      fmt::print("  level {}: {:<6} unreadable: {}\n", level["level"].get<int>(), path,
                 printable_line(level["error"].get<std::string>(), 300));
    else
      fmt::print("  level {}: {:<6} shape {} chunks {} {} scale {}\n", level["level"].get<int>(), path,
                 shape_text(level["shape"]), shape_text(level["chunk_shape"]), level["dtype"].get<std::string>(),
                 compact(level["scale"]));
  }
  fmt::print("read a level with: zarrdirect read PATH --level N\n");
}

}  // namespace

Run add_info_command(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  auto* sub = app.add_subcommand("info", "Describe an array or group (or, with --system, this machine's GPU I/O paths)");
  sub->add_option("path", options->path, "Array or group folder");
  sub->add_flag("--json", options->json, "Print JSON");
  sub->add_flag("--system", options->system, "Show every CUDA device, GDS and the I/O path reads will take");
  return [options]() {
    if (options->system) {
      if (!options->path.empty()) throw UsageError("info: give a PATH or --system, not both");
      auto doc = describe_system();
      doc["codecs"] = supported_codecs();
      if (options->json) print_json(doc);
      else print_system(doc);
      return 0;
    }
    if (options->path.empty()) throw UsageError("info: a PATH is required (or --system)");
    Node node = open_node(options->path);
    if (node.group) {
      auto doc = describe_group(*node.group, options->path);
      if (options->json) print_json(doc);
      else print_group(doc);
      return 0;
    }
    if (options->json) {
      print_json(describe(*node.array));
    } else {
      const StorageSummary stored = node.array->storage_summary();
      print_array(describe(*node.array, stored), stored);
    }
    return 0;
  };
}

}  // namespace zarrdirect::cli
