// Arrays, regions and destination shapes the batched placement is tested with, shared by the
// host reference test (batch_table_test.cpp) and the GPU test (batch_kernels_test.cpp): small
// chunks (plain and shard inner chunks), edge chunks cut by the array and the region, missing
// chunks and inner chunks with a fill value whose bytes differ, a byte-swapped dtype, and
// C-order, F-order and padded destinations.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/array.hpp"

namespace zarrdirect::test {

struct BatchCase {
  std::string name;
  std::filesystem::path path;
  Array array;
};

inline nlohmann::json batch_doc(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, const char* dtype,
                                double fill, nlohmann::json codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", dtype},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", fill},
          {"codecs", codecs}};
}

inline nlohmann::json batch_bytes_codec(const char* endian = "little") {
  return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}};
}

inline nlohmann::json batch_sharding(std::vector<std::uint64_t> inner, bool checksum) {
  nlohmann::json index = checksum ? nlohmann::json::array({batch_bytes_codec(), {{"name", "crc32c"}}})
                                  : nlohmann::json::array({batch_bytes_codec()});
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner}, {"codecs", nlohmann::json::array({batch_bytes_codec()})}, {"index_codecs", index}}}};
}

// Writes a 3-d array of `T` whose element (i, j, k) is a mix of its coordinates, except that the
// block [0, hole) in every dim holds `fill` (so the chunks or inner chunks there are left out).
template <typename T>
Array write_batch_array(const std::filesystem::path& path, const nlohmann::json& doc, std::uint64_t hole, T fill) {
  Array array = Array::create(path, doc);
  const auto& shape = array.metadata().shape;
  std::vector<T> data(shape[0] * shape[1] * shape[2]);
  std::size_t n = 0;
  for (std::uint64_t i = 0; i < shape[0]; ++i)
    for (std::uint64_t j = 0; j < shape[1]; ++j)
      for (std::uint64_t k = 0; k < shape[2]; ++k, ++n)
        data[n] = (i < hole && j < hole && k < hole) ? fill : static_cast<T>((i * 131 + j * 17 + k * 3 + 1) % 251 + 9);
  Source source;
  source.data = data.data();
  array.write({}, source);
  return array;
}

// The cases, written under `dir`. Some chunk files and a whole shard are removed afterwards.
inline std::vector<BatchCase> batch_cases(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  std::vector<BatchCase> cases;
  auto add = [&](const std::string& name, Array array) { cases.push_back({name, dir / name, std::move(array)}); };
  add("raw32", write_batch_array<std::uint16_t>(
                   dir / "raw32", batch_doc({96, 80, 72}, {32, 32, 32}, "uint16", 0, json::array({batch_bytes_codec()})),
                   0, 0));
  // Fill 0x0107: its two bytes differ, so no memset can write it. The first chunk holds only
  // the fill value (left out by the writer); another is removed.
  add("raw32_missing",
      write_batch_array<std::uint16_t>(dir / "raw32_missing",
                                       batch_doc({96, 80, 72}, {32, 32, 32}, "uint16", 263, json::array({batch_bytes_codec()})),
                                       32, 263));
  fs::remove(dir / "raw32_missing" / "c" / "1" / "2" / "1");
  add("sharded", write_batch_array<std::uint16_t>(
                     dir / "sharded",
                     batch_doc({128, 96, 72}, {64, 64, 64}, "uint16", 0, json::array({batch_sharding({32, 32, 32}, false)})),
                     0, 0));
  // A checksummed index, an inner chunk of fill values (left out) and a whole shard removed.
  add("sharded_missing",
      write_batch_array<std::uint16_t>(
          dir / "sharded_missing",
          batch_doc({128, 96, 72}, {64, 64, 64}, "uint16", 263, json::array({batch_sharding({32, 32, 32}, true)})), 32,
          263));
  fs::remove(dir / "sharded_missing" / "c" / "1" / "0" / "1");
  add("u8_16", write_batch_array<std::uint8_t>(
                   dir / "u8_16", batch_doc({40, 40, 40}, {16, 16, 16}, "uint8", 0, json::array({batch_bytes_codec()})), 0,
                   0));
  // Big-endian doubles: decoded (byte-swapped) on the host before they are staged.
  add("f64_big", write_batch_array<double>(
                     dir / "f64_big", batch_doc({33, 34, 35}, {8, 8, 8}, "float64", 0, json::array({batch_bytes_codec("big")})),
                     0, 0.0));
  return cases;
}

// The regions each case is read in: whole, and one cutting every chunk at the array's edges.
inline std::vector<Region> batch_regions(const std::vector<std::uint64_t>& shape) {
  Region odd;
  for (std::size_t d = 0; d < shape.size(); ++d) odd.push_back({d + 3, shape[d] - (d + 2)});
  return {full_region(shape), odd};
}

// A destination shape for a region: byte strides and the bytes it spans.
struct BatchDestination {
  std::string name;
  std::vector<std::int64_t> byte_strides;
  std::size_t nbytes = 0;
};

// C order, F order, and C order with one padding element after every run of every dim.
inline std::vector<BatchDestination> batch_destinations(const Region& region, std::size_t element_size) {
  const std::size_t rank = region.size();
  std::vector<BatchDestination> out;
  auto strides_for = [&](bool fortran, std::uint64_t pad) {
    BatchDestination dest;
    dest.byte_strides.assign(rank, 0);
    std::int64_t stride = static_cast<std::int64_t>(element_size);
    for (std::size_t n = 0; n < rank; ++n) {
      const std::size_t d = fortran ? n : rank - 1 - n;
      dest.byte_strides[d] = stride;
      stride *= static_cast<std::int64_t>(region[d].size() + pad);
    }
    dest.nbytes = static_cast<std::size_t>(stride);
    return dest;
  };
  out.push_back(strides_for(false, 0));
  out.back().name = "C";
  out.push_back(strides_for(true, 0));
  out.back().name = "F";
  out.push_back(strides_for(false, 1));
  out.back().name = "padded";
  return out;
}

}  // namespace zarrdirect::test
