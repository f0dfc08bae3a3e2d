// What a pyramid will be before any of it is written: the levels' shapes and physical
// placement, the axes, and the metadata documents (group attributes, each level's array).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/codec_spec.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect {

struct MultiscalePlan {
  int zarr_format = 2;                      // 2 for NGFF 0.4, 3 for 0.5
  std::vector<std::string> axis_names;
  std::vector<std::string> axis_types;      // "space", "time", "channel" or "" (custom: left out)
  std::vector<std::string> units;           // "" for none
  std::vector<MultiscaleLevelWritten> levels;
  bool with_translation = false;            // whether datasets carry a translation
};

// Checks `options` against an array of `shape` and works out the levels. Translations move by
// half of the level's pixel along each halved axis for mean and max (the output pixel's centre
// is the centre of its block); nearest keeps the block's last pixel (index 2i+1), so the level
// moves by a whole pixel of the level above. Errors: Error(invalid_argument) naming the option (see write_multiscale).
MultiscalePlan plan_multiscale(const std::vector<std::uint64_t>& shape, const MultiscaleWriteOptions& options);

// The group's attributes: NGFF 0.4 {"multiscales": [...]} or 0.5 {"ome": {"version", "multiscales"}}.
nlohmann::json multiscale_attributes(const MultiscalePlan& plan, const MultiscaleWriteOptions& options);

// The metadata document of level `level`'s array (v2 .zarray with "/" separators, or v3
// zarr.json with dimension_names = the axes' names).
nlohmann::json level_array_metadata(const MultiscalePlan& plan, std::size_t level, const DataType& dtype,
                                    const MultiscaleWriteOptions& options);

}  // namespace zarrdirect
