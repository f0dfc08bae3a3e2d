// OME-Zarr (NGFF 0.4 / 0.5) "coordinateTransformations": where a pyramid level sits in physical
// space.
//
// A level's transformations are its dataset's own list followed by the multiscale's optional list
// (the spec applies the latter "after" the former, to every level alike). Both only hold "scale"
// and "translation" (and "identity"), so any sequence of them folds into one per-axis
//   physical = scale * index + translation
// which is what a level reports: applying a scale s' multiplies both the scale and the
// translation so far by s'; a translation t' adds to the translation. For the usual
// [scale s_ds, translation t_ds] then [scale s_ms, translation t_ms] that gives
//   scale = s_ds * s_ms,  translation = t_ds * s_ms + t_ms.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zarrdirect {

// The composed placement of one level. Empty vectors mean "none given": no scale transformation
// anywhere (the scale is 1), or no translation anywhere (the offset is 0).
struct LevelPlacement {
  std::vector<double> scale;
  std::vector<double> translation;
};

// How many values every scale and translation vector of one image must have: the number of axes
// when the image lists them, else the length of the first vector met (0 until then).
struct TransformRank {
  std::size_t values = 0;
  bool from_axes = false;
};

// Applies the transformations of `list` (a "coordinateTransformations" value; `field` is its
// name in messages, e.g. "multiscales[0].datasets[1].coordinateTransformations") to `placement`.
// Errors: Error(invalid_metadata) naming `where` and the field for a list that is not a list of
// objects with a string "type", a vector that is missing, not a list of finite numbers, or of the
// wrong length; Error(unsupported) for a transformation type other than scale, translation and
// identity, or a vector stored as binary data ("path").
void apply_coordinate_transformations(LevelPlacement& placement, TransformRank& rank, const nlohmann::json& list,
                                      const std::string& where, const std::string& field);

}  // namespace zarrdirect
