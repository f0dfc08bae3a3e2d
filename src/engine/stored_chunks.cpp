#include "engine/stored_chunks.hpp"

#include <charconv>
#include <string>
#include <string_view>

namespace zarrdirect {
namespace {

// A coordinate as the key encoding writes it: decimal, no sign, no leading zero, inside the grid.
bool parse_coordinate(std::string_view text, std::uint64_t extent, std::uint64_t& value) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value < extent;
}

class ChunkLister {
 public:
  ChunkLister(const Store& store, const ArrayMetadata& metadata,
              const std::function<void(const std::vector<std::uint64_t>&)>& visit)
      : store_(store), encoding_(metadata.chunk_key_encoding), grid_(metadata.chunk_grid_shape()), visit_(visit) {}

  void run() {
    const bool v3 = encoding_.kind == ChunkKeyEncoding::Kind::v3_default;
    std::vector<std::uint64_t> coords;
    if (grid_.empty()) {
      visit_(coords);  // the single chunk of a 0-d array: "c" (v3) or "0" (v2)
    } else if (encoding_.separator == '/') {
      walk(v3 ? "c" : "", coords);
    } else {
      for (const auto& name : store_.list("")) match_dotted(name, v3);
    }
  }

 private:
  // "/"-separated keys: one folder level per dimension, the last level holding the files.
  void walk(const std::string& folder, std::vector<std::uint64_t>& coords) {
    const std::size_t dim = coords.size();
    for (const auto& name : store_.list(folder)) {
      std::uint64_t value = 0;
      if (!parse_coordinate(name, grid_[dim], value)) continue;
      coords.push_back(value);
      if (coords.size() == grid_.size()) visit_(coords);
      else walk(folder.empty() ? name : folder + "/" + name, coords);
      coords.pop_back();
    }
  }

  // "."-separated keys: one name in the folder itself, "c.0.1" (v3) or "0.1" (v2).
  void match_dotted(std::string_view name, bool v3) {
    if (v3) {
      if (!name.starts_with("c.")) return;
      name.remove_prefix(2);
    }
    std::vector<std::uint64_t> coords;
    while (true) {
      if (coords.size() == grid_.size()) return;  // more parts than dimensions
      auto dot = name.find('.');
      std::uint64_t value = 0;
      if (!parse_coordinate(name.substr(0, dot), grid_[coords.size()], value)) return;
      coords.push_back(value);
      if (dot == std::string_view::npos) break;
      name.remove_prefix(dot + 1);
    }
    if (coords.size() == grid_.size()) visit_(coords);
  }

  const Store& store_;
  const ChunkKeyEncoding& encoding_;
  std::vector<std::uint64_t> grid_;
  const std::function<void(const std::vector<std::uint64_t>&)>& visit_;
};

}  // namespace

void for_each_listed_chunk(const Store& store, const ArrayMetadata& metadata,
                           const std::function<void(const std::vector<std::uint64_t>& coords)>& visit) {
  ChunkLister(store, metadata, visit).run();
}

}  // namespace zarrdirect
