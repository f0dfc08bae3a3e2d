// Groups and OME-Zarr multiscale images.
//
//   auto image = zarrdirect::Multiscale::open("/data/cells.ome.zarr");
//   for (std::size_t i = 0; i < image.levels().size(); ++i)
//     std::printf("level %zu: %s\n", i, image.levels()[i].path.c_str());
//   auto level1 = image.open_level(1).read({}, zarrdirect::Device::cuda);
//
// OME-Zarr 0.4 keeps "multiscales" in a v2 group's .zattrs; 0.5 keeps it under
// "attributes"."ome" of a v3 group's zarr.json. Both are read.
//
// Consolidated metadata (v2: .zmetadata at the group root; v3: "consolidated_metadata" inside the
// group's zarr.json) is used when present: members and their array metadata then come from that
// one document instead of a directory listing and a file per member, which is what makes wide
// hierarchies cheap to inspect. Chunk data is always read from the member's own folder.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/array.hpp"

namespace zarrdirect {

enum class NodeType { array, group };
std::string_view to_string(NodeType type);

struct GroupMember {
  std::string name;
  NodeType type = NodeType::array;
};

// What the folder at a path holds, judged from its metadata files alone.
enum class NodeKind {
  none,           // a folder without zarr.json, .zarray or .zgroup
  array_v2,       // .zarray (it wins over a .zgroup beside it, as Array::open reads it)
  array_v3,       // zarr.json with "node_type": "array"
  group_v2,       // .zgroup whose .zattrs hold no OME-Zarr "multiscales"
  group_v3,       // zarr.json with "node_type": "group", no OME-Zarr "multiscales" in its attributes
  multiscale_v2,  // an OME-Zarr image (NGFF 0.4 and earlier): .zgroup, "multiscales" in .zattrs
  multiscale_v3,  // an OME-Zarr image (NGFF 0.5): "multiscales" under the attributes' "ome"
};
std::string_view to_string(NodeKind kind);  // "none", "array (v2)", ..., "OME-Zarr multiscale image (v3)"
bool is_array(NodeKind kind);               // array_v2 or array_v3
bool is_group(NodeKind kind);               // a group, multiscale images included

// Tells what `path` holds. zarr.json is read first (v3), then .zarray, .zgroup and .zattrs (v2),
// each through the store's checked path: opened beneath the folder (a link out of it is refused,
// naming the file), never blocking (a FIFO or device there is refused as not a regular file),
// size-checked before it is read and parsed with the metadata limits. Only the node's own
// documents are read; whether an array's metadata is complete is for Array::open to say.
// Errors: Error(io) when `path` is not a readable folder; Error(invalid_metadata) when zarr.json
// (or the .zattrs of a v2 group) is not a JSON object or zarr.json's "node_type" is neither "array"
// nor "group"; the store's errors for files it refuses. Thread-safe.
NodeKind node_kind(const std::filesystem::path& path, const StoreOptions& options = {});

// A group folder: its attributes and members.
class Group {
 public:
  // Opens the group at `path` (a folder or an http(s) URL reached with `options`, which the
  // group keeps for the arrays and groups opened through it).
  static Group open(const std::filesystem::path& path, const StoreOptions& options = {});
  // Creates a group in folder `path` (made if missing): v3 zarr.json with node_type "group", or
  // v2 .zgroup (+ .zattrs when `attributes` is not empty). A folder already holding an array or
  // group is Error(invalid_argument) and left untouched unless `overwrite`, which first removes
  // everything inside it. Written atomically (temporary file + rename).
  static Group create(const std::filesystem::path& path, int zarr_format = 3,
                      const nlohmann::json& attributes = nlohmann::json::object(), bool overwrite = false);
  const std::filesystem::path& path() const { return path_; }
  const StoreOptions& store_options() const { return options_; }
  int zarr_format() const { return zarr_format_; }
  const nlohmann::json& attributes() const { return attributes_; }
  // Changes and saves the group's attributes, as Array::update_attributes does (v3 zarr.json
  // rewritten whole, v2 .zattrs); attributes() then holds the saved ones.
  nlohmann::json update_attributes(const nlohmann::json& set, const std::vector<std::string>& remove = {},
                                   bool durable = false);
  // Replaces all of the group's attributes with `attributes` (a JSON object), saved at once.
  void set_attributes(const nlohmann::json& attributes, bool durable = false);
  // True when members and their metadata come from consolidated metadata.
  bool consolidated() const { return consolidated_ != nullptr; }

  // Names of the arrays and groups directly inside, sorted ("0", "labels", ...).
  std::vector<std::string> members() const;
  // The same, each with whether it is an array or a group.
  std::vector<GroupMember> member_nodes() const;
  // Whether `relative` names an array or a group below this one; nullopt when it is neither.
  std::optional<NodeType> node_type(const std::string& relative) const;

  // Opens the array at `relative` ("0", "scale0/image"), which must stay inside the group.
  Array open_array(const std::string& relative) const;
  // Opens the group at `relative`, sharing this group's consolidated metadata.
  Group open_group(const std::string& relative) const;
  // The metadata of the array at `relative`, from consolidated metadata when the group has it
  // (no file of the member is read), else from the member's own metadata file.
  ArrayMetadata array_metadata(const std::string& relative) const;

  struct Consolidated;  // the parsed consolidated document, shared by a group and its subgroups

 private:
  std::filesystem::path path_;
  StoreOptions options_;
  int zarr_format_ = 3;
  nlohmann::json attributes_ = nlohmann::json::object();
  std::shared_ptr<const Consolidated> consolidated_;
  std::string prefix_;  // this group's key inside consolidated_: "" at its root, else "a/b/"
};

struct MultiscaleAxis {
  std::string name;
  std::string type;  // "space", "time", "channel" or empty
  std::string unit;
};

// One resolution level. `scale` and `translation` place it in physical space, one value per axis
// (physical = scale * index + translation): the dataset's own coordinateTransformations followed by
// the multiscale's, as NGFF 0.4/0.5 compose them (scale = s_dataset * s_multiscale, translation =
// t_dataset * s_multiscale + t_multiscale). Empty when no transformation gives one.
struct MultiscaleLevel {
  std::string path;  // relative to the group
  std::vector<double> scale;
  std::vector<double> translation;
};

class Multiscale {
 public:
  // Opens the first multiscale image of the group at `path`. A group without "multiscales" is
  // Error(invalid_metadata); so are malformed coordinateTransformations (not a list of objects,
  // a vector that is not numbers or has the wrong length), named by field. A transformation type
  // other than scale, translation or identity is Error(unsupported).
  static Multiscale open(const std::filesystem::path& path, const StoreOptions& options = {});
  const Group& group() const { return group_; }
  const std::string& version() const { return version_; }
  const std::string& name() const { return name_; }
  const std::vector<MultiscaleAxis>& axes() const { return axes_; }
  const std::vector<MultiscaleLevel>& levels() const { return levels_; }
  std::filesystem::path level_path(std::size_t level) const;
  Array open_level(std::size_t level) const;
  // The level's array metadata (shape, dtype, ...), from consolidated metadata when present.
  ArrayMetadata level_metadata(std::size_t level) const;

 private:
  const MultiscaleLevel& level_at(std::size_t level) const;

  Group group_;
  std::string version_;
  std::string name_;
  std::vector<MultiscaleAxis> axes_;
  std::vector<MultiscaleLevel> levels_;
};

}  // namespace zarrdirect
