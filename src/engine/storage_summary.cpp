// Array::storage_summary: what is stored of the chunk grid, found as the reader would find it.
//
// The folder is listed (through the store, which never leaves the array folder), each name is
// decoded as a chunk key of this array's encoding and grid, and only a name that encodes back to
// itself counts: "c/01/2", "c/0/9" beyond the grid, ".zattrs" or "notes.txt" are not chunks. Each
// chunk key is then opened as a read opens it, so links out of the folder and FIFOs are refused
// rather than counted.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/file_store.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

// A coordinate as the key encoding writes it: decimal, no sign, no leading zero, inside the grid.
bool parse_coordinate(std::string_view text, std::uint64_t extent, std::uint64_t& value) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value < extent;
}

class ChunkCounter {
 public:
  ChunkCounter(const Store& store, const ArrayMetadata& metadata)
      : store_(store), encoding_(metadata.chunk_key_encoding), grid_(metadata.chunk_grid_shape()) {}

  StorageSummary count() {
    // Saturating, though parsing keeps the element count (so the chunk count) below 2^63.
    summary_.chunks_total = 1;
    for (auto extent : grid_)
      summary_.chunks_total = extent == 0 || summary_.chunks_total <= UINT64_MAX / extent
                                  ? summary_.chunks_total * extent
                                  : UINT64_MAX;
    const bool v3 = encoding_.kind == ChunkKeyEncoding::Kind::v3_default;
    std::vector<std::uint64_t> coords;
    if (grid_.empty()) {
      add(coords);  // the single chunk of a 0-d array: "c" (v3) or "0" (v2)
    } else if (encoding_.separator == '/') {
      walk(v3 ? "c" : "", coords);
    } else {
      for (const auto& name : store_.list("")) match_dotted(name, v3);
    }
    return summary_;
  }

 private:
  // "/"-separated keys: one folder level per dimension, the last level holding the files.
  void walk(const std::string& folder, std::vector<std::uint64_t>& coords) {
    const std::size_t dim = coords.size();
    for (const auto& name : store_.list(folder)) {
      std::uint64_t value = 0;
      if (!parse_coordinate(name, grid_[dim], value)) continue;
      coords.push_back(value);
      if (coords.size() == grid_.size()) add(coords);
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
    if (coords.size() == grid_.size()) add(coords);
  }

  void add(const std::vector<std::uint64_t>& coords) {
    try {
      auto file = store_.open_object(encoding_.key(coords));
      if (!file) return;  // listed, then removed: missing
      ++summary_.chunks_stored;
      summary_.bytes_stored += file->size();
    } catch (const Error&) {
      ++summary_.chunks_refused;  // a read of this chunk fails with the same error
    }
  }

  const Store& store_;
  const ChunkKeyEncoding& encoding_;
  std::vector<std::uint64_t> grid_;
  StorageSummary summary_;
};

}  // namespace

StorageSummary Array::storage_summary() const {
  auto store = open_store(path());
  return ChunkCounter(*store, metadata()).count();
}

}  // namespace zarrdirect
