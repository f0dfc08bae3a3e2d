#include "metadata/ome_transforms.hpp"

#include <cmath>

#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// Images have at most 5 axes (NGFF 0.4/0.5); 32 matches the library's rank limit and keeps a
// hostile list from being copied around at length.
constexpr std::size_t kMaxValues = 32;

// `text` quoted and escaped, cut to a length that fits a message line.
std::string quoted_short(const std::string& text) {
  constexpr std::size_t kMaxShown = 60;
  if (text.size() <= kMaxShown) return json_quoted(text);
  return json_quoted(text.substr(0, kMaxShown)) + "...";
}

std::vector<double> vector_of(const nlohmann::json& transform, const std::string& type, TransformRank& rank,
                              const std::string& where, const std::string& field) {
  auto it = transform.find(type);
  if (it == transform.end()) {
    if (transform.contains("path"))
      throw Error(ErrorKind::unsupported,
                  fmt::format("{}: field \"{}\": a {} stored as binary data (\"path\") is not supported", where,
                              field, type));
    throw_invalid_field(where, field + "." + type, "is missing");
  }
  const std::string vector_field = field + "." + type;
  if (!it->is_array() || it->empty()) throw_invalid_field(where, vector_field, "must be a non-empty list of numbers");
  if (it->size() > kMaxValues) throw_invalid_field(where, vector_field, fmt::format("has more than {} values", kMaxValues));
  std::vector<double> values;
  for (const auto& item : *it) {
    // A non-finite value can only come from a lenient parser (NaN in attributes); it places
    // nothing anywhere.
    if (!item.is_number())
      throw_invalid_field(where, vector_field, fmt::format("must be a list of numbers, has a {}", item.type_name()));
    if (!std::isfinite(item.get<double>()))
      throw_invalid_field(where, vector_field, "must be a list of finite numbers");
    values.push_back(item.get<double>());
  }
  if (rank.values == 0) {
    rank.values = values.size();
  } else if (values.size() != rank.values) {
    throw_invalid_field(where, vector_field,
                        rank.from_axes ? fmt::format("has {} values, the image has {} axes", values.size(), rank.values)
                                       : fmt::format("has {} values, the image's other transformations have {}",
                                                     values.size(), rank.values));
  }
  return values;
}

void apply_scale(LevelPlacement& placement, const std::vector<double>& scale) {
  if (placement.scale.empty()) {
    placement.scale = scale;
  } else {
    for (std::size_t d = 0; d < scale.size(); ++d) placement.scale[d] *= scale[d];
  }
  // A scale after a translation scales the offset too.
  for (std::size_t d = 0; d < placement.translation.size(); ++d) placement.translation[d] *= scale[d];
}

void apply_translation(LevelPlacement& placement, const std::vector<double>& translation) {
  if (placement.translation.empty()) {
    placement.translation = translation;
  } else {
    for (std::size_t d = 0; d < translation.size(); ++d) placement.translation[d] += translation[d];
  }
}

}  // namespace

void apply_coordinate_transformations(LevelPlacement& placement, TransformRank& rank, const nlohmann::json& list,
                                      const std::string& where, const std::string& field) {
  if (!list.is_array()) throw_invalid_field(where, field, "must be a list of transformations");
  std::size_t index = 0;
  for (const auto& transform : list) {
    const std::string item_field = fmt::format("{}[{}]", field, index++);
    if (!transform.is_object()) throw_invalid_field(where, item_field, "must be an object");
    auto type_field = transform.find("type");
    if (type_field == transform.end()) throw_invalid_field(where, item_field + ".type", "is missing");
    if (!type_field->is_string())
      throw_invalid_field(where, item_field + ".type", fmt::format("must be a string, not a {}", type_field->type_name()));
    const std::string& type = type_field->get_ref<const std::string&>();
    if (type == "scale") {
      apply_scale(placement, vector_of(transform, type, rank, where, item_field));
    } else if (type == "translation") {
      apply_translation(placement, vector_of(transform, type, rank, where, item_field));
    } else if (type != "identity") {
      throw Error(ErrorKind::unsupported,
                  fmt::format("{}: field \"{}.type\": transformation {} is not supported (only scale, translation "
                              "and identity, as in OME-Zarr 0.4 and 0.5); open a level's array by its path instead",
                              where, item_field, quoted_short(type)));
    }
  }
}

}  // namespace zarrdirect
