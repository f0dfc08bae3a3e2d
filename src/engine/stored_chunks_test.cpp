// for_each_listed_chunk: the coordinates of the chunk keys of the array's grid found in its
// folder, for "/" and "." separators, and nothing else (keys beyond the grid, spelled otherwise, or
// other files).
#include "engine/stored_chunks.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/file_store.hpp"
#include "test_support.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
using Coords = std::vector<std::uint64_t>;

std::vector<Coords> listed(const std::filesystem::path& folder) {
  const ArrayMetadata metadata = read_array_metadata(folder);
  FileStore store(folder);
  std::vector<Coords> found;
  for_each_listed_chunk(store, metadata, [&](const Coords& coords) { found.push_back(coords); });
  std::sort(found.begin(), found.end());
  return found;
}

json v3(const std::string& separator) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", {6, 7}},
          {"data_type", "uint8"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {4, 3}}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", separator}}}}},
          {"fill_value", 0},
          {"codecs", json::array({{{"name", "bytes"}}})}};
}

TEST(StoredChunks, ListsTheKeysOfTheGridOnly) {
  test::TempDir dir;
  for (const std::string separator : {"/", "."}) {
    SCOPED_TRACE(separator);
    const auto folder = dir / (separator == "/" ? "slash" : "dot");
    test::write_text(folder / "zarr.json", v3(separator).dump());
    for (const char* key : {"c/0/0", "c/1/2", "c/2/0", "c/0/3", "c/01/1"}) {  // the last three: not of the grid
      std::string name = key;
      if (separator == ".") std::replace(name.begin(), name.end(), '/', '.');
      test::write_bytes(folder / name, {1});
    }
    test::write_bytes(folder / "notes.txt", {1});
    EXPECT_EQ(listed(folder), (std::vector<Coords>{{0, 0}, {1, 2}}));
  }
}

}  // namespace
}  // namespace zarrdirect
