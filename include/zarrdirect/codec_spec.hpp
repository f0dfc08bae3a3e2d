// Codec specs and metadata for new arrays, shared by the CLI (`convert --codec`) and the Python
// module (`zarrdirect.create(codec=...)`).
//
// A codec spec is short text:
//   raw                          no compression
//   zstd[:LEVEL]                 zstd, level 3 by default
//   blosc[:CNAME[:CLEVEL[:SHUFFLE]]]  blosc, lz4:5:shuffle by default; SHUFFLE is noshuffle,
//                                shuffle or bitshuffle; CNAME lz4, lz4hc, blosclz, zstd, zlib
//   gzip[:LEVEL]  zlib[:LEVEL]  bz2[:LEVEL]  lzma[:PRESET]  lz4[:ACCELERATION]
// optionally followed by "+crc32c" (v3: a checksum after the compressor). Or, for zarr_format 3,
// a JSON codec list as in zarr.json ('[{"name": "bytes", ...}, ...]'), used as it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/dtype.hpp"

namespace zarrdirect {

// The v3 codecs list (bytes codec first, then compressor and checksum) for `spec` and `dtype`.
// `level`, when given, replaces the spec's level (clevel for blosc). Throws
// Error(invalid_argument) naming the spec and the part that does not parse.
nlohmann::json v3_codecs_from_spec(std::string_view spec, const DataType& dtype, std::optional<int> level = {});

// The v2 "compressor" entry for `spec` (null for raw). JSON lists and "+crc32c" are refused
// (Error(invalid_argument)): v2 has one compressor and no checksum codec.
nlohmann::json v2_compressor_from_spec(std::string_view spec, const DataType& dtype, std::optional<int> level = {});

// What a new array looks like, in the terms of zarrdirect.create() and `convert`.
struct ArrayLayout {
  std::vector<std::uint64_t> shape;
  DataType dtype;
  std::vector<std::uint64_t> chunks;   // empty: the whole shape (v3 sharded: the inner chunks)
  std::vector<std::uint64_t> shards;   // v3 only; empty: no sharding. Each a multiple of chunks.
  std::string codec = "zstd:3";
  std::optional<int> level;
  int zarr_format = 3;
  nlohmann::json fill_value = 0;
  nlohmann::json attributes = nlohmann::json::object();
  std::vector<std::optional<std::string>> dimension_names;  // v3 only; empty: none
};

// The metadata document (v3 zarr.json or v2 .zarray with "attributes") for Array::create.
// Shapes that do not fit (chunks of another rank, shards that chunks do not divide, shards in
// v2) are Error(invalid_argument).
nlohmann::json make_array_metadata(const ArrayLayout& layout);

}  // namespace zarrdirect
