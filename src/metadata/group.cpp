#include "zarrdirect/group.hpp"

#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "store/file_store.hpp"

namespace zarrdirect {
namespace {

constexpr std::uint64_t kMaxMetadataBytes = 64u << 20;

std::optional<nlohmann::json> read_json(const FileStore& store, const std::string& key) {
  auto bytes = store.read(key, kMaxMetadataBytes);
  if (!bytes) return std::nullopt;
  return parse_json_document(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                             (store.root() / key).string());
}

std::vector<double> numbers(const nlohmann::json& value, const std::string& where, std::string_view field) {
  std::vector<double> out;
  if (!value.is_array()) throw_invalid_field(where, field, "must be a list of numbers");
  for (const auto& v : value) {
    if (!v.is_number()) throw_invalid_field(where, field, "must be a list of numbers");
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace

Group Group::open(const std::filesystem::path& path) {
  FileStore store(path);
  Group group;
  group.path_ = path;
  if (auto doc = read_json(store, "zarr.json")) {
    std::string where = (path / "zarr.json").string();
    if (doc->value("node_type", "") != "group")
      throw_invalid_field(where, "node_type", "is not \"group\"");
    group.zarr_format_ = 3;
    if (doc->contains("attributes")) group.attributes_ = (*doc)["attributes"];
    return group;
  }
  if (read_json(store, ".zgroup")) {
    group.zarr_format_ = 2;
    if (auto attrs = read_json(store, ".zattrs")) group.attributes_ = *attrs;
    return group;
  }
  throw Error(ErrorKind::invalid_argument,
              fmt::format("{}: not a Zarr group: no zarr.json (v3) or .zgroup (v2) found", path.string()));
}

std::vector<std::string> Group::members() const {
  FileStore store(path_);
  std::vector<std::string> names;
  for (const auto& name : store.list("")) {
    if (name.starts_with(".") || name == "zarr.json") continue;
    if (store.exists(name + "/zarr.json") || store.exists(name + "/.zarray") || store.exists(name + "/.zgroup"))
      names.push_back(name);
  }
  return names;
}

Array Group::open_array(const std::string& relative) const {
  FileStore::check_key(relative);
  return Array::open(path_ / relative);
}

Multiscale Multiscale::open(const std::filesystem::path& path) {
  Multiscale image;
  image.group_ = Group::open(path);
  std::string where = (path / (image.group_.zarr_format() == 3 ? "zarr.json" : ".zattrs")).string();
  const nlohmann::json& attrs = image.group_.attributes();
  // 0.5: attributes.ome.multiscales; 0.4 and earlier: multiscales at the top.
  const nlohmann::json* container = &attrs;
  if (attrs.contains("ome") && attrs["ome"].is_object()) {
    container = &attrs["ome"];
    image.version_ = attrs["ome"].value("version", "0.5");
  }
  if (!container->contains("multiscales") || !(*container)["multiscales"].is_array() || (*container)["multiscales"].empty())
    throw Error(ErrorKind::invalid_metadata, fmt::format("{}: no OME-Zarr \"multiscales\" attribute", where));
  const auto& multiscale = (*container)["multiscales"][0];
  if (image.version_.empty()) image.version_ = multiscale.value("version", "");
  image.name_ = multiscale.value("name", "");
  if (multiscale.contains("axes") && multiscale["axes"].is_array()) {
    for (const auto& axis : multiscale["axes"]) {
      if (axis.is_string()) image.axes_.push_back({axis.get<std::string>(), "", ""});  // 0.3 style
      else if (axis.is_object()) image.axes_.push_back({axis.value("name", ""), axis.value("type", ""), axis.value("unit", "")});
    }
  }
  const auto& datasets = required_field(multiscale, "datasets", where);
  if (!datasets.is_array() || datasets.empty()) throw_invalid_field(where, "multiscales[0].datasets", "must be a non-empty list");
  for (const auto& dataset : datasets) {
    MultiscaleLevel level;
    level.path = parse_string(required_field(dataset, "path", where), "multiscales[0].datasets[].path", where);
    FileStore::check_key(level.path);
    if (dataset.contains("coordinateTransformations") && dataset["coordinateTransformations"].is_array()) {
      for (const auto& transform : dataset["coordinateTransformations"]) {
        auto type = transform.value("type", "");
        if (type == "scale" && transform.contains("scale"))
          level.scale = numbers(transform["scale"], where, "coordinateTransformations[].scale");
        if (type == "translation" && transform.contains("translation"))
          level.translation = numbers(transform["translation"], where, "coordinateTransformations[].translation");
      }
    }
    image.levels_.push_back(std::move(level));
  }
  return image;
}

std::filesystem::path Multiscale::level_path(std::size_t level) const {
  if (level >= levels_.size())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: level {} requested, the image has {} levels", group_.path().string(), level, levels_.size()));
  return group_.path() / levels_[level].path;
}

Array Multiscale::open_level(std::size_t level) const { return Array::open(level_path(level)); }

}  // namespace zarrdirect
