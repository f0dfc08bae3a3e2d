#include "engine/multiscale_plan.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "engine/downsample.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

[[noreturn]] void bad_option(const std::string& message) { throw Error(ErrorKind::invalid_argument, message); }

std::string quote_name(const std::string& text) { return nlohmann::json(text.substr(0, 40)).dump(); }

std::vector<std::string> default_axes(std::size_t rank) {
  static const std::vector<std::string> all = {"t", "c", "z", "y", "x"};
  if (rank == 0 || rank > all.size())
    bad_option(fmt::format("axes: cannot guess the axes of {} dimensions; give axes= (2 to 5 names)", rank));
  return {all.end() - static_cast<std::ptrdiff_t>(rank), all.end()};
}

std::string axis_type(const std::string& name) {
  if (name == "t") return "time";
  if (name == "c") return "channel";
  if (name == "x" || name == "y" || name == "z") return "space";
  return "";
}

// NGFF 0.4 / 0.5 axes rules: 2 to 5 axes, 2 or 3 of type space, at most one time and one channel
// or custom axis, time first, then channel or custom, then space.
void check_axes(const MultiscalePlan& plan, unsigned halved) {
  const auto& names = plan.axis_names;
  const auto& types = plan.axis_types;
  if (names.size() < 2 || names.size() > 5)
    bad_option(fmt::format("axes: OME-Zarr images have 2 to 5 axes, not {}", names.size()));
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (name.empty()) bad_option("axes: an axis name is empty");
    if (!seen.insert(name).second) bad_option(fmt::format("axes: {} is named twice", quote_name(name)));
  }
  int order = 0, space = 0, time = 0, other = 0;
  for (std::size_t d = 0; d < names.size(); ++d) {
    const int rank = types[d] == "time" ? 0 : types[d] == "space" ? 2 : 1;
    if (rank < order)
      bad_option(fmt::format("axes: {} comes after a later kind of axis (NGFF orders time, channel, space)",
                             quote_name(names[d])));
    order = rank;
    (rank == 0 ? time : rank == 2 ? space : other) += 1;
  }
  if (space < 2 || space > 3) bad_option(fmt::format("axes: OME-Zarr images have 2 or 3 space axes, not {}", space));
  if (time > 1 || other > 1) bad_option("axes: at most one time axis and one channel (or custom) axis");
  for (std::size_t d = names.size() - halved; d < names.size(); ++d)
    if (types[d] != "space")
      bad_option(fmt::format("axes: {} is halved (downsample {}) but is not a space axis", quote_name(names[d]),
                             halved == 3 ? "zyx" : "yx"));
}

nlohmann::json axes_json(const MultiscalePlan& plan) {
  nlohmann::json axes = nlohmann::json::array();
  for (std::size_t d = 0; d < plan.axis_names.size(); ++d) {
    nlohmann::json axis = {{"name", plan.axis_names[d]}};
    if (!plan.axis_types[d].empty()) axis["type"] = plan.axis_types[d];
    if (!plan.units[d].empty()) axis["unit"] = plan.units[d];
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace

MultiscalePlan plan_multiscale(const std::vector<std::uint64_t>& shape, const MultiscaleWriteOptions& options) {
  const std::size_t rank = shape.size();
  MultiscalePlan plan;
  if (options.ngff == "0.4") plan.zarr_format = 2;
  else if (options.ngff == "0.5") plan.zarr_format = 3;
  else bad_option(fmt::format("ngff: version {} is not written (0.4 or 0.5)", quote_name(options.ngff)));
  const unsigned halved = options.downsample_dims;
  if (halved != 2 && halved != 3) bad_option(fmt::format("downsample: halves yx (2) or zyx (3), not {} axes", halved));
  if (options.levels < 1) bad_option("levels: at least 1 (level 0 alone)");
  if (options.levels > 32) bad_option(fmt::format("levels: {} is more than 32", options.levels));
  if (rank < halved) bad_option(fmt::format("downsample: cannot halve {} axes of {} dimensions", halved, rank));
  if (!options.shards.empty() && plan.zarr_format == 2)
    bad_option("shards: NGFF 0.4 is stored as Zarr v2, which has no shards (use ngff 0.5)");

  plan.axis_names = options.axes.empty() ? default_axes(rank) : options.axes;
  if (plan.axis_names.size() != rank)
    bad_option(fmt::format("axes: {} names for {} dimensions", plan.axis_names.size(), rank));
  for (const auto& name : plan.axis_names) plan.axis_types.push_back(axis_type(name));
  check_axes(plan, halved);
  plan.units = options.units.empty() ? std::vector<std::string>(rank) : options.units;
  if (plan.units.size() != rank) bad_option(fmt::format("units: {} for {} dimensions", plan.units.size(), rank));
  for (std::size_t d = 0; d < rank; ++d)
    if (!plan.units[d].empty() && plan.axis_types[d] == "channel")
      bad_option(fmt::format("units: the channel axis {} has no unit", quote_name(plan.axis_names[d])));

  std::vector<double> scale = options.scale.empty() ? std::vector<double>(rank, 1.0) : options.scale;
  std::vector<double> translation = options.translation.empty() ? std::vector<double>(rank, 0.0) : options.translation;
  if (scale.size() != rank) bad_option(fmt::format("scale: {} values for {} dimensions", scale.size(), rank));
  if (translation.size() != rank)
    bad_option(fmt::format("translation: {} values for {} dimensions", translation.size(), rank));
  for (std::size_t d = 0; d < rank; ++d) {
    if (!std::isfinite(scale[d]) || scale[d] <= 0) bad_option(fmt::format("scale: {} is not a positive number", scale[d]));
    if (!std::isfinite(translation[d])) bad_option(fmt::format("translation: {} is not a number", translation[d]));
  }
  plan.with_translation = !options.translation.empty() || options.levels > 1;

  std::vector<std::uint64_t> level_shape = shape;
  for (std::size_t k = 0; k < options.levels; ++k) {
    if (k > 0) {
      level_shape = downsampled_shape(level_shape, halved);
      for (std::size_t d = rank - halved; d < rank; ++d) {
        translation[d] += (options.method == DownsampleMethod::nearest ? 1.0 : 0.5) * scale[d];
        scale[d] *= 2;
      }
    }
    for (std::size_t d = rank - halved; d < rank; ++d)
      if (level_shape[d] == 0)
        bad_option(fmt::format("levels: level {} would have no {} (the axis has {} elements); ask for fewer levels",
                               k, quote_name(plan.axis_names[d]), shape[d]));
    plan.levels.push_back({std::to_string(k), level_shape, scale, translation});
  }
  return plan;
}

nlohmann::json multiscale_attributes(const MultiscalePlan& plan, const MultiscaleWriteOptions& options) {
  nlohmann::json datasets = nlohmann::json::array();
  for (const auto& level : plan.levels) {
    nlohmann::json transforms = nlohmann::json::array({{{"type", "scale"}, {"scale", level.scale}}});
    if (plan.with_translation) transforms.push_back({{"type", "translation"}, {"translation", level.translation}});
    datasets.push_back({{"path", level.path}, {"coordinateTransformations", std::move(transforms)}});
  }
  nlohmann::json multiscale = nlohmann::json::object();
  if (plan.zarr_format == 2) multiscale["version"] = "0.4";
  if (!options.name.empty()) multiscale["name"] = options.name;
  multiscale["axes"] = axes_json(plan);
  multiscale["datasets"] = std::move(datasets);
  multiscale["type"] = std::string(to_string(options.method));
  multiscale["metadata"] = {{"description", fmt::format("{} over {} blocks, each level from the one above",
                                                        to_string(options.method),
                                                        options.downsample_dims == 3 ? "2x2x2 (zyx)" : "2x2 (yx)")},
                            {"method", "zarrdirect.write_multiscale"}};
  nlohmann::json list = nlohmann::json::array({std::move(multiscale)});
  if (plan.zarr_format == 2) return {{"multiscales", std::move(list)}};
  return {{"ome", {{"version", "0.5"}, {"multiscales", std::move(list)}}}};
}

nlohmann::json level_array_metadata(const MultiscalePlan& plan, std::size_t level, const DataType& dtype,
                                    const MultiscaleWriteOptions& options) {
  const auto& shape = plan.levels.at(level).shape;
  const std::size_t rank = shape.size();
  ArrayLayout layout;
  layout.shape = shape;
  layout.dtype = dtype;
  layout.zarr_format = plan.zarr_format;
  layout.codec = options.codec;
  layout.level = options.codec_level;
  layout.fill_value = dtype.kind == ScalarKind::complex ? nlohmann::json::array({0, 0})
                      : dtype.kind == ScalarKind::boolean ? nlohmann::json(false)
                                                           : nlohmann::json(0);
  std::vector<std::uint64_t> chunks = options.chunks;
  if (chunks.empty()) {
    chunks.assign(rank, 1);
    for (std::size_t d = rank - options.downsample_dims; d < rank; ++d) chunks[d] = options.downsample_dims == 3 ? 128 : 256;
  }
  if (chunks.size() != rank) bad_option(fmt::format("chunks: {} extents for {} dimensions", chunks.size(), rank));
  layout.chunks.resize(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    if (chunks[d] == 0) bad_option("chunks: an extent is 0");
    layout.chunks[d] = std::max<std::uint64_t>(1, std::min(chunks[d], shape[d]));
  }
  if (!options.shards.empty()) {
    if (options.shards.size() != rank) bad_option(fmt::format("shards: {} extents for {} dimensions", options.shards.size(), rank));
    layout.shards.resize(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      if (options.shards[d] == 0 || options.shards[d] % chunks[d] != 0)
        bad_option(fmt::format("shards: {} is not a multiple of the chunk extent {}", options.shards[d], chunks[d]));
      // A level smaller than the shard keeps one shard of whole chunks.
      const std::uint64_t chunk = layout.chunks[d];
      const std::uint64_t covering = (std::max<std::uint64_t>(shape[d], 1) + chunk - 1) / chunk * chunk;
      layout.shards[d] = chunk == chunks[d] ? std::min(options.shards[d], covering) : chunk;
    }
  }
  if (plan.zarr_format == 3)
    for (const auto& name : plan.axis_names) layout.dimension_names.emplace_back(name);
  nlohmann::json document = make_array_metadata(layout);
  if (plan.zarr_format == 2) document["dimension_separator"] = "/";  // NGFF 0.4 stores chunks as a/b/c
  return document;
}

}  // namespace zarrdirect
