// Groups and OME-Zarr multiscale images.
//
//   auto image = zarrdirect::Multiscale::open("/data/cells.ome.zarr");
//   for (std::size_t i = 0; i < image.levels().size(); ++i)
//     std::printf("level %zu: %s\n", i, image.levels()[i].path.c_str());
//   auto level1 = image.open_level(1).read({}, zarrdirect::Device::cuda);
//
// OME-Zarr 0.4 keeps "multiscales" in a v2 group's .zattrs; 0.5 keeps it under
// "attributes"."ome" of a v3 group's zarr.json. Both are read.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/array.hpp"

namespace zarrdirect {

// A group folder: its attributes and members.
class Group {
 public:
  static Group open(const std::filesystem::path& path);
  const std::filesystem::path& path() const { return path_; }
  int zarr_format() const { return zarr_format_; }
  const nlohmann::json& attributes() const { return attributes_; }
  // Names of the arrays and groups directly inside, sorted ("0", "labels", ...).
  std::vector<std::string> members() const;
  // Opens the array at `relative` ("0", "scale0/image"), which must stay inside the group.
  Array open_array(const std::string& relative) const;

 private:
  std::filesystem::path path_;
  int zarr_format_ = 3;
  nlohmann::json attributes_ = nlohmann::json::object();
};

struct MultiscaleAxis {
  std::string name;
  std::string type;  // "space", "time", "channel" or empty
  std::string unit;
};

struct MultiscaleLevel {
  std::string path;                  // relative to the group
  std::vector<double> scale;         // from coordinateTransformations, empty if none
  std::vector<double> translation;
};

class Multiscale {
 public:
  // Opens the first multiscale image of the group at `path`.
  static Multiscale open(const std::filesystem::path& path);
  const Group& group() const { return group_; }
  const std::string& version() const { return version_; }
  const std::string& name() const { return name_; }
  const std::vector<MultiscaleAxis>& axes() const { return axes_; }
  const std::vector<MultiscaleLevel>& levels() const { return levels_; }
  std::filesystem::path level_path(std::size_t level) const;
  Array open_level(std::size_t level) const;

 private:
  Group group_;
  std::string version_;
  std::string name_;
  std::vector<MultiscaleAxis> axes_;
  std::vector<MultiscaleLevel> levels_;
};

}  // namespace zarrdirect
