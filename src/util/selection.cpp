// The public selection type (zarrdirect/selection.hpp): resolving each axis against its extent
// with NumPy's rules, and the text form the CLI and Python share.
#include "zarrdirect/selection.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

[[noreturn]] void bad_selection(const std::string& message) {
  throw Error(ErrorKind::invalid_argument, "selection: " + message);
}

// NumPy's slice.indices() for a bound, in signed 128-bit-safe steps: extents fit in int64 for
// any array that can be indexed (a selection's count is allocated).
std::int64_t clip_bound(bool has, std::int64_t value, std::int64_t extent, bool start, std::int64_t step) {
  if (!has) {
    if (step > 0) return start ? 0 : extent;
    return start ? extent - 1 : -1;
  }
  if (value < 0) {
    value = value < -extent ? -1 : value + extent;
    if (value < 0) return step > 0 ? 0 : -1;
    return value;
  }
  if (value >= extent) return step > 0 ? extent : extent - 1;
  return value;
}

std::int64_t signed_extent(std::uint64_t extent) {
  if (extent > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    bad_selection(fmt::format("an axis of extent {} cannot be indexed", extent));
  return static_cast<std::int64_t>(extent);
}

std::uint64_t wrap_index(std::int64_t index, std::uint64_t extent, std::size_t axis) {
  const std::int64_t n = signed_extent(extent);
  if (index < -n || index >= n)
    bad_selection(fmt::format("index {} is out of bounds for axis {} with size {}", index, axis, extent));
  return static_cast<std::uint64_t>(index < 0 ? index + n : index);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::int64_t parse_integer(std::string_view text, std::string_view item) {
  std::int64_t value = 0;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    bad_selection(fmt::format("{} is not an integer, a slice such as 2:5, ::2 or ::-1, or '...'",
                              quote(item)));
  return value;
}

}  // namespace

AxisSelection AxisSelection::all() { return slice_open(false, 0, false, 0, 1); }

AxisSelection AxisSelection::slice(std::int64_t start, std::int64_t stop, std::int64_t step) {
  return slice_open(true, start, true, stop, step);
}

AxisSelection AxisSelection::slice_open(bool has_start, std::int64_t start, bool has_stop, std::int64_t stop,
                                        std::int64_t step) {
  AxisSelection axis;
  axis.kind_ = Kind::slice;
  axis.has_start_ = has_start;
  axis.start_ = start;
  axis.has_stop_ = has_stop;
  axis.stop_ = stop;
  axis.step_ = step;
  return axis;
}

AxisSelection AxisSelection::index(std::int64_t index) {
  AxisSelection axis;
  axis.kind_ = Kind::index;
  axis.indices_ = {index};
  return axis;
}

AxisSelection AxisSelection::list(std::vector<std::int64_t> indices) {
  AxisSelection axis;
  axis.kind_ = Kind::list;
  axis.indices_ = std::move(indices);
  return axis;
}

AxisSelection AxisSelection::mask(const std::vector<bool>& mask) {
  AxisSelection axis;
  axis.kind_ = Kind::list;
  axis.mask_extent_ = static_cast<std::int64_t>(mask.size());
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) axis.indices_.push_back(static_cast<std::int64_t>(i));
  return axis;
}

AxisSelection::Strided AxisSelection::resolve_slice(std::uint64_t extent) const {
  if (step_ == 0) bad_selection("slice step cannot be zero");
  const std::int64_t n = signed_extent(extent);
  const std::int64_t first = clip_bound(has_start_, start_, n, true, step_);
  const std::int64_t last = clip_bound(has_stop_, stop_, n, false, step_);
  Strided strided;
  strided.step = step_;
  strided.first = static_cast<std::uint64_t>(std::max<std::int64_t>(first, 0));
  if (step_ > 0 && last > first) {
    strided.count = static_cast<std::uint64_t>(last - first - 1) / static_cast<std::uint64_t>(step_) + 1;
  } else if (step_ < 0 && first > last) {
    // |step| without overflow for INT64_MIN.
    const std::uint64_t magnitude = static_cast<std::uint64_t>(-(step_ + 1)) + 1;
    strided.count = static_cast<std::uint64_t>(first - last - 1) / magnitude + 1;
  }
  return strided;
}

std::vector<std::uint64_t> AxisSelection::resolve(std::uint64_t extent, std::size_t axis) const {
  std::vector<std::uint64_t> picked;
  if (kind_ == Kind::slice) {
    const Strided strided = resolve_slice(extent);
    picked.resize(static_cast<std::size_t>(strided.count));
    std::uint64_t at = strided.first;
    for (auto& index : picked) {
      index = at;
      at += static_cast<std::uint64_t>(strided.step);  // wraps as two's complement for negative steps
    }
    return picked;
  }
  if (mask_extent_ >= 0 && static_cast<std::uint64_t>(mask_extent_) != extent)
    bad_selection(fmt::format("boolean index did not match indexed array along axis {}; size of axis is {} but "
                              "size of corresponding boolean axis is {}",
                              axis, extent, mask_extent_));
  picked.reserve(indices_.size());
  for (std::int64_t index : indices_) picked.push_back(wrap_index(index, extent, axis));
  return picked;
}

std::vector<std::uint64_t> selection_shape(const Selection& selection, std::span<const std::uint64_t> shape) {
  if (selection.empty()) return {shape.begin(), shape.end()};
  if (selection.size() != shape.size())
    bad_selection(fmt::format("has {} axes, the array has {}", selection.size(), shape.size()));
  std::vector<std::uint64_t> out;
  for (std::size_t d = 0; d < selection.size(); ++d) {
    const auto& axis = selection[d];
    switch (axis.kind()) {
      case AxisSelection::Kind::slice: out.push_back(axis.resolve_slice(shape[d]).count); break;
      case AxisSelection::Kind::list: out.push_back(axis.indices().size()); break;
      case AxisSelection::Kind::index: break;
    }
  }
  return out;
}

bool selection_is_box(const Selection& selection, std::span<const std::uint64_t> shape, Region& region) {
  region = full_region(shape);
  if (selection.empty()) return true;
  if (selection.size() != shape.size()) return false;
  for (std::size_t d = 0; d < selection.size(); ++d) {
    if (selection[d].kind() != AxisSelection::Kind::slice) return false;
    const auto strided = selection[d].resolve_slice(shape[d]);
    if (strided.step != 1) return false;
    region[d] = {strided.first, strided.first + strided.count};
  }
  return true;
}

Selection parse_selection(std::string_view text, std::span<const std::uint64_t> shape) {
  text = trim(text);
  Selection selection;
  if (text.empty()) {
    for (std::size_t d = 0; d < shape.size(); ++d) selection.push_back(AxisSelection::all());
    return selection;
  }
  std::vector<std::string_view> items;
  while (true) {
    auto comma = text.find(',');
    items.push_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  const auto ellipses = std::count(items.begin(), items.end(), "...");
  if (ellipses > 1) bad_selection("an index can only have a single ellipsis ('...')");
  const std::size_t named = items.size() - static_cast<std::size_t>(ellipses);
  if (named > shape.size())
    bad_selection(fmt::format("too many indices for array: array is {}-dimensional, but {} were indexed",
                              shape.size(), named));
  for (std::string_view item : items) {
    if (item == "...") {
      for (std::size_t k = 0; k < shape.size() - named; ++k) selection.push_back(AxisSelection::all());
      continue;
    }
    if (item.empty()) bad_selection(fmt::format("axis {} is empty", selection.size()));
    auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      selection.push_back(AxisSelection::index(parse_integer(item, item)));
      continue;
    }
    std::string_view start = trim(item.substr(0, colon));
    std::string_view rest = item.substr(colon + 1);
    auto second = rest.find(':');
    std::string_view stop = trim(rest.substr(0, second));
    std::string_view step = second == std::string_view::npos ? std::string_view() : trim(rest.substr(second + 1));
    if (second != std::string_view::npos && rest.find(':', second + 1) != std::string_view::npos)
      bad_selection(fmt::format("{} has more than two ':'", quote(item)));
    const std::int64_t step_value = step.empty() ? 1 : parse_integer(step, item);
    if (step_value == 0) bad_selection(fmt::format("{}: slice step cannot be zero", quote(item)));
    selection.push_back(AxisSelection::slice_open(!start.empty(), start.empty() ? 0 : parse_integer(start, item),
                                                  !stop.empty(), stop.empty() ? 0 : parse_integer(stop, item),
                                                  step_value));
  }
  while (selection.size() < shape.size()) selection.push_back(AxisSelection::all());
  // Indices are checked here, so that a bad one is named before anything is read.
  for (std::size_t d = 0; d < selection.size(); ++d)
    if (selection[d].kind() == AxisSelection::Kind::index) (void)selection[d].resolve(shape[d], d);
  return selection;
}

std::string to_string(const Selection& selection) {
  std::string text;
  for (std::size_t d = 0; d < selection.size(); ++d) {
    const auto& axis = selection[d];
    if (d) text += ",";
    switch (axis.kind()) {
      case AxisSelection::Kind::index: text += fmt::format("{}", axis.indices().front()); break;
      case AxisSelection::Kind::list:
        text += axis.indices().size() <= 8 ? fmt::format("[{}]", fmt::join(axis.indices(), ","))
                                           : fmt::format("[{} indices]", axis.indices().size());
        break;
      case AxisSelection::Kind::slice: text += "slice"; break;
    }
  }
  return text;
}

}  // namespace zarrdirect
