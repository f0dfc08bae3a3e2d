#include "zarrdirect/group.hpp"

#include <map>

#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "metadata/metadata_file.hpp"
#include "metadata/ome_transforms.hpp"
#include "store/file_store.hpp"
#include "util/quote.hpp"

namespace zarrdirect {

// Consolidated metadata, flattened: every node below the root group under its relative path.
struct Group::Consolidated {
  struct Node {
    std::optional<NodeType> type;  // unset for a v2 key that has only .zattrs (no node there)
    nlohmann::json doc;            // v2: .zarray / .zgroup; v3: the node's zarr.json
    nlohmann::json attributes = nlohmann::json::object();
  };
  int zarr_format = 3;
  std::string where;                  // the file the document came from, for messages
  std::map<std::string, Node> nodes;  // "0", "labels", "labels/cells" (sorted, so members are)
};

namespace {

std::optional<nlohmann::json> read_json(const Store& store, const std::string& key) {
  return read_metadata_document(store, key);
}

// A string field read leniently: absent or not a string gives `fallback`. For optional, descriptive
// fields (names, units, versions) where a wrong type should not make the whole group unreadable.
std::string text_or(const nlohmann::json& doc, const char* key, const std::string& fallback = "") {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// v2 .zmetadata: {"zarr_consolidated_format": 1, "metadata": {"0/.zarray": {...}, ...}}.
std::shared_ptr<const Group::Consolidated> parse_v2_consolidated(const nlohmann::json& doc, const std::string& where) {
  const auto& format = required_field(doc, "zarr_consolidated_format", where);
  if (!format.is_number_integer() || format.get<std::int64_t>() != 1)
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: zarr_consolidated_format {} is not supported (only 1)", where, quoted_json(format)));
  const auto& metadata = required_field(doc, "metadata", where);
  if (!metadata.is_object()) throw_invalid_field(where, "metadata", "must be an object");
  auto consolidated = std::make_shared<Group::Consolidated>();
  consolidated->zarr_format = 2;
  consolidated->where = where;
  for (const auto& [key, value] : metadata.items()) {
    auto slash = key.rfind('/');
    std::string node = slash == std::string::npos ? "" : key.substr(0, slash);
    std::string file = slash == std::string::npos ? key : key.substr(slash + 1);
    if (node.empty()) continue;  // the root group's own documents: read from its files
    if (file != ".zarray" && file != ".zgroup" && file != ".zattrs") continue;
    if (!value.is_object()) throw_invalid_field(where, fmt::format("metadata.{}", key), "must be an object");
    auto& entry = consolidated->nodes[node];
    if (file == ".zattrs") {
      entry.attributes = value;
    } else {
      entry.type = file == ".zarray" ? NodeType::array : NodeType::group;
      entry.doc = value;
    }
  }
  std::erase_if(consolidated->nodes, [](const auto& item) { return !item.second.type; });
  return consolidated;
}

// v3: "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {"0": {...}}}
// as zarr-python 3 writes it; null or absent means none.
std::shared_ptr<const Group::Consolidated> parse_v3_consolidated(const nlohmann::json& doc, const std::string& where) {
  auto it = doc.find("consolidated_metadata");
  if (it == doc.end() || it->is_null()) return nullptr;
  if (!it->is_object()) throw_invalid_field(where, "consolidated_metadata", "must be an object or null");
  std::string kind = text_or(*it, "kind", "inline");
  if (kind != "inline") {
    auto flag = it->find("must_understand");
    bool must_understand = flag == it->end() || !flag->is_boolean() || flag->get<bool>();
    if (must_understand)
      throw Error(ErrorKind::unsupported,
                  fmt::format("{}: consolidated_metadata of kind {} is not supported", where, quote(kind)));
    return nullptr;  // optional and unknown: the members' own files still say everything
  }
  const auto& metadata = required_field(*it, "metadata", where);
  if (!metadata.is_object()) throw_invalid_field(where, "consolidated_metadata.metadata", "must be an object");
  auto consolidated = std::make_shared<Group::Consolidated>();
  consolidated->zarr_format = 3;
  consolidated->where = where;
  for (const auto& [key, value] : metadata.items()) {
    std::string field = fmt::format("consolidated_metadata.metadata.{}", key);
    if (!value.is_object()) throw_invalid_field(where, field, "must be an object");
    std::string node = key;
    while (node.starts_with('/')) node.erase(0, 1);
    if (node.empty()) continue;
    std::string type = parse_string(required_field(value, "node_type", where), field + ".node_type", where);
    if (type != "array" && type != "group") throw_invalid_field(where, field + ".node_type", "must be \"array\" or \"group\"");
    auto& entry = consolidated->nodes[node];
    entry.type = type == "array" ? NodeType::array : NodeType::group;
    entry.doc = value;
    if (value.contains("attributes") && value["attributes"].is_object()) entry.attributes = value["attributes"];
  }
  return consolidated;
}

// The type of the node in folder `key` of `store`, from its own metadata files.
std::optional<NodeType> node_type_on_disk(const Store& store, const std::string& key) {
  if (store.exists(key + "/.zarray")) return NodeType::array;
  if (store.exists(key + "/.zgroup")) return NodeType::group;
  if (auto doc = read_json(store, key + "/zarr.json")) {
    auto type = text_or(*doc, "node_type");
    if (type == "array") return NodeType::array;
    if (type == "group") return NodeType::group;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(NodeType type) { return type == NodeType::array ? "array" : "group"; }

Group Group::open(const std::filesystem::path& path, const StoreOptions& options) {
  auto store_handle = open_store(path, options);
  const Store& store = *store_handle;
  Group group;
  group.path_ = path;
  group.options_ = options;
  if (auto doc = read_json(store, "zarr.json")) {
    std::string where = (path / "zarr.json").string();
    auto type = text_or(*doc, "node_type");
    if (type == "array") throw_invalid_field(where, "node_type", "is \"array\": this is an array, not a group");
    if (type != "group") throw_invalid_field(where, "node_type", "is not \"group\"");
    group.zarr_format_ = 3;
    if (doc->contains("attributes")) group.attributes_ = (*doc)["attributes"];
    group.consolidated_ = parse_v3_consolidated(*doc, where);
    return group;
  }
  if (read_json(store, ".zgroup")) {
    group.zarr_format_ = 2;
    if (auto attrs = read_json(store, ".zattrs")) group.attributes_ = *attrs;
    if (auto doc = read_json(store, ".zmetadata")) group.consolidated_ = parse_v2_consolidated(*doc, (path / ".zmetadata").string());
    return group;
  }
  if (store.exists(".zarray"))
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: is a Zarr v2 array, not a group", printable(path.string())));
  throw Error(ErrorKind::invalid_argument,
              fmt::format("{}: not a Zarr group: no zarr.json (v3) or .zgroup (v2) found", printable(path.string())));
}

std::vector<std::string> Group::members() const {
  std::vector<std::string> names;
  for (auto& member : member_nodes()) names.push_back(std::move(member.name));
  return names;
}

std::vector<GroupMember> Group::member_nodes() const {
  std::vector<GroupMember> members;
  if (consolidated_) {
    for (const auto& [key, node] : consolidated_->nodes) {
      if (!key.starts_with(prefix_)) continue;
      std::string_view rest = std::string_view(key).substr(prefix_.size());
      if (!rest.empty() && rest.find('/') == std::string_view::npos) members.push_back({std::string(rest), *node.type});
    }
    return members;
  }
  auto store = open_store(path_, options_);
  for (const auto& name : store->list("")) {
    if (name.starts_with(".") || name == "zarr.json") continue;
    if (auto type = node_type_on_disk(*store, name)) members.push_back({name, *type});
  }
  return members;
}

std::optional<NodeType> Group::node_type(const std::string& relative) const {
  FileStore::check_key(relative);
  if (consolidated_) {
    auto it = consolidated_->nodes.find(prefix_ + relative);
    if (it != consolidated_->nodes.end()) return *it->second.type;
  }
  return node_type_on_disk(*open_store(path_, options_), relative);
}

Array Group::open_array(const std::string& relative) const {
  // Through array_metadata(): consolidated metadata spares one metadata read per member.
  ArrayMetadata metadata = array_metadata(relative);
  open_store(path_, options_)->require_beneath(relative);
  return Array::open(path_ / relative, std::move(metadata), options_);
}

Group Group::open_group(const std::string& relative) const {
  FileStore::check_key(relative);
  if (consolidated_) {
    std::string key = prefix_ + relative;
    auto it = consolidated_->nodes.find(key);
    if (it != consolidated_->nodes.end() && it->second.type == NodeType::group) {
      Group group;
      group.path_ = path_ / relative;
      group.options_ = options_;
      group.zarr_format_ = zarr_format_;
      group.attributes_ = it->second.attributes;
      group.consolidated_ = consolidated_;
      group.prefix_ = key + "/";
      return group;
    }
  }
  open_store(path_, options_)->require_beneath(relative);
  return Group::open(path_ / relative, options_);
}

ArrayMetadata Group::array_metadata(const std::string& relative) const {
  FileStore::check_key(relative);
  if (consolidated_) {
    std::string key = prefix_ + relative;
    auto it = consolidated_->nodes.find(key);
    // A member the consolidated document does not list was added after it was written: its own
    // files are the truth then.
    if (it != consolidated_->nodes.end()) {
      const auto& node = it->second;
      if (node.type != NodeType::array)
        throw Error(ErrorKind::invalid_argument, fmt::format("{}: is a group, not an array", printable((path_ / relative).string())));
      std::string where = fmt::format("{} (entry {})", consolidated_->where, quote(key, 200));
      if (consolidated_->zarr_format == 3) return parse_v3_array_metadata(node.doc, where);
      return parse_v2_array_metadata(node.doc, node.attributes, where);
    }
  }
  open_store(path_, options_)->require_beneath(relative);
  return read_array_metadata(path_ / relative, options_);
}

Multiscale Multiscale::open(const std::filesystem::path& path, const StoreOptions& options) {
  Multiscale image;
  image.group_ = Group::open(path, options);
  std::string where = (path / (image.group_.zarr_format() == 3 ? "zarr.json" : ".zattrs")).string();
  const nlohmann::json& attrs = image.group_.attributes();
  // 0.5: attributes.ome.multiscales; 0.4 and earlier: multiscales at the top.
  const nlohmann::json* container = &attrs;
  if (attrs.contains("ome") && attrs["ome"].is_object()) {
    container = &attrs["ome"];
    image.version_ = text_or(attrs["ome"], "version", "0.5");
  }
  if (!container->contains("multiscales") || !(*container)["multiscales"].is_array() || (*container)["multiscales"].empty())
    throw Error(ErrorKind::invalid_metadata, fmt::format("{}: no OME-Zarr \"multiscales\" attribute", where));
  const auto& multiscale = (*container)["multiscales"][0];
  if (!multiscale.is_object()) throw_invalid_field(where, "multiscales[0]", "must be an object");
  if (image.version_.empty()) image.version_ = text_or(multiscale, "version");
  image.name_ = text_or(multiscale, "name");
  if (multiscale.contains("axes") && multiscale["axes"].is_array()) {
    for (const auto& axis : multiscale["axes"]) {
      if (axis.is_string()) image.axes_.push_back({axis.get<std::string>(), "", ""});  // 0.3 style
      else if (axis.is_object()) image.axes_.push_back({text_or(axis, "name"), text_or(axis, "type"), text_or(axis, "unit")});
    }
  }
  const auto& datasets = required_field(multiscale, "datasets", where);
  if (!datasets.is_array() || datasets.empty()) throw_invalid_field(where, "multiscales[0].datasets", "must be a non-empty list");
  // Every scale and translation has one value per axis (or, for images that list no axes, as many
  // as the first one met).
  TransformRank rank{image.axes_.size(), !image.axes_.empty()};
  std::size_t index = 0;
  for (const auto& dataset : datasets) {
    if (!dataset.is_object()) throw_invalid_field(where, "multiscales[0].datasets[]", "must be an object");
    MultiscaleLevel level;
    level.path = parse_string(required_field(dataset, "path", where), "multiscales[0].datasets[].path", where);
    try {
      FileStore::check_key(level.path);
    } catch (const Error& e) {
      // invalid_argument, not invalid_metadata: `zarrdirect info` takes the latter for "a plain
      // group, no image", and this image must fail loudly.
      throw Error(ErrorKind::invalid_argument, fmt::format("{}: multiscales[0].datasets[].path: {}", where, e.what()));
    }
    // The dataset's own transformations, then the multiscale's (applied after, to every level).
    LevelPlacement placement;
    if (auto own = dataset.find("coordinateTransformations"); own != dataset.end())
      apply_coordinate_transformations(placement, rank, *own, where,
                                       fmt::format("multiscales[0].datasets[{}].coordinateTransformations", index));
    if (auto whole = multiscale.find("coordinateTransformations"); whole != multiscale.end())
      apply_coordinate_transformations(placement, rank, *whole, where, "multiscales[0].coordinateTransformations");
    level.scale = std::move(placement.scale);
    level.translation = std::move(placement.translation);
    image.levels_.push_back(std::move(level));
    ++index;
  }
  return image;
}

const MultiscaleLevel& Multiscale::level_at(std::size_t level) const {
  if (level >= levels_.size())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: level {} requested, the image has {} levels", printable(group_.path().string()), level,
                            levels_.size()));
  return levels_[level];
}

std::filesystem::path Multiscale::level_path(std::size_t level) const { return group_.path() / level_at(level).path; }

Array Multiscale::open_level(std::size_t level) const {
  ArrayMetadata metadata = level_metadata(level);
  open_store(group_.path(), group_.store_options())->require_beneath(level_at(level).path);
  return Array::open(level_path(level), std::move(metadata), group_.store_options());
}

ArrayMetadata Multiscale::level_metadata(std::size_t level) const { return group_.array_metadata(level_at(level).path); }

}  // namespace zarrdirect
