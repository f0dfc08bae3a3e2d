// ArrayMetadata: one format-neutral description of a Zarr v2 or v3 array.
//
// Both formats are parsed into this plain struct. Zarr v2's compressor, filters, byte order and
// order 'F' become an equivalent v3-style codec chain (transpose, numcodecs.* filters, bytes,
// numcodecs.* compressor), so everything downstream of parsing knows only one model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/dtype.hpp"
#include "zarrdirect/store_options.hpp"

namespace zarrdirect {

// How chunk grid coordinates become store keys.
struct ChunkKeyEncoding {
  enum class Kind { v3_default, v2 } kind = Kind::v3_default;
  char separator = '/';

  // The key of the chunk at `coords`, relative to the array folder: "c/0/1", "0.1", "c", "0".
  std::string key(std::span<const std::uint64_t> coords) const;
};

struct ArrayMetadata {
  int zarr_format = 3;
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> chunk_shape;  // the outer (shard) grid when sharded
  DataType dtype;
  // One element of the fill value in native byte order (dtype.size bytes).
  std::vector<std::byte> fill_value;
  // The fill value as the metadata wrote it, for display.
  nlohmann::json fill_value_json;
  // The codec chain in v3 form: [array->array..., array->bytes, bytes->bytes...].
  nlohmann::json codecs = nlohmann::json::array();
  ChunkKeyEncoding chunk_key_encoding;
  nlohmann::json attributes = nlohmann::json::object();
  std::vector<std::optional<std::string>> dimension_names;  // empty when none were given

  std::size_t rank() const { return shape.size(); }
  std::uint64_t num_elements() const;  // product of shape
  // Number of chunks along each dimension (ceil(shape / chunk_shape)).
  std::vector<std::uint64_t> chunk_grid_shape() const;
  std::uint64_t num_chunks() const;
  // Bytes of one full chunk in memory; checked for overflow when the metadata is parsed.
  std::uint64_t chunk_nbytes() const;
};

// Parses the text of a v3 zarr.json (node_type array). `where` names the file in errors.
ArrayMetadata parse_v3_array_metadata(const nlohmann::json& doc, const std::string& where);

// Parses the text of a v2 .zarray, with the attributes of .zattrs when present.
ArrayMetadata parse_v2_array_metadata(const nlohmann::json& doc, const nlohmann::json& attrs,
                                      const std::string& where);

// Reads and parses the metadata of the array folder `path`, detecting the format from zarr.json
// (v3) or .zarray (v2) as the original kvikio module did; a URL is reached with `options`.
ArrayMetadata read_array_metadata(const std::filesystem::path& path, const StoreOptions& options = {});

}  // namespace zarrdirect
