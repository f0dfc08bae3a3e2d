// Hostile input never crashes, hangs or escapes (issue 6).
//
// A table of small arrays, each broken in one way, written by the test itself. For every case
// Array::open + read must throw a zarrdirect::Error of the expected kind whose message names the
// file or chunk key and the field, and `zarrdirect read` must exit 1 with a single "error:" line.
//
// Compressor cases (corrupt frames, decompression bombs, headers that lie) run for every codec
// they name: each of those codecs must be registered, so none of them is ever skipped.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <blosc.h>
#include <bzlib.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <functional>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "codec/crc32c.hpp"
#include "codec/registry.hpp"
#include "test_support.hpp"
#include "util/quote.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

// ---- Fixtures -----------------------------------------------------------------------------------

// A 4x4 uint16 array in one chunk: the base every metadata case breaks one field of.
json v3_doc() {
  return json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "uint16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
  })");
}

json v2_doc() {
  return json::parse(R"({
    "zarr_format": 2, "shape": [4, 4], "chunks": [4, 4], "dtype": "<u2", "fill_value": 0,
    "order": "C", "compressor": null, "filters": null
  })");
}

// An 8x8 uint16 array in one shard of 2x2 inner chunks of 4x4, index (bytes + crc32c) at `location`.
json sharded_doc(const char* location = "end") {
  json doc = v3_doc();
  doc["shape"] = {8, 8};
  doc["chunk_grid"]["configuration"]["chunk_shape"] = {8, 8};
  doc["codecs"] = json::array({{{"name", "sharding_indexed"},
                                {"configuration",
                                 {{"chunk_shape", {4, 4}},
                                  {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})},
                                  {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                                {{"name", "crc32c"}}})},
                                  {"index_location", location}}}}});
  return doc;
}

Bytes chunk_values(std::size_t nbytes) {
  Bytes data(nbytes);
  for (std::size_t i = 0; i < nbytes; ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return data;
}

void put_json(const fs::path& file, const json& doc) { test::write_text(file, doc.dump()); }

// The encoded index of a shard: (offset, nbytes) pairs, little-endian, then their CRC-32C.
Bytes shard_index(const std::vector<std::uint64_t>& pairs) {
  Bytes index;
  for (auto v : pairs)
    for (int b = 0; b < 8; ++b) index.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
  std::uint32_t crc = codec::crc32c(std::as_bytes(std::span(index)));
  for (int b = 0; b < 4; ++b) index.push_back(static_cast<std::uint8_t>(crc >> (8 * b)));
  return index;
}

constexpr std::uint64_t kMissing = ~std::uint64_t{0};

// A shard file with the four 32-byte inner chunks stored back to back and the given index pairs.
Bytes shard_with(const std::vector<std::uint64_t>& pairs, bool index_at_start = false, std::size_t body = 128) {
  Bytes data = chunk_values(body);
  Bytes index = shard_index(pairs);
  if (index_at_start) {
    index.insert(index.end(), data.begin(), data.end());
    return index;
  }
  data.insert(data.end(), index.begin(), index.end());
  return data;
}

// ---- Compressed frames, made with the libraries themselves ------------------------------------

Bytes zstd_compress(const Bytes& data) {
  Bytes out(ZSTD_compressBound(data.size()));
  std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  if (ZSTD_isError(n)) throw std::runtime_error("zstd");
  out.resize(n);
  return out;
}

// A zstd frame that says nothing of its size and expands to `gib` GiB through RLE blocks: 64 KiB
// that a decoder trusting its output would need gigabytes for.
Bytes zstd_rle_bomb(std::size_t gib) {
  Bytes frame{0x28, 0xb5, 0x2f, 0xfd};
  frame.push_back(0x00);  // descriptor: no content size, not single segment, no checksum
  frame.push_back(0x58);  // window descriptor: 2^(10 + 11) = 2 MiB
  const std::size_t blocks = gib * 8192;  // 128 KiB per block
  for (std::size_t i = 0; i < blocks; ++i) {
    std::uint32_t header = (i + 1 == blocks ? 1u : 0u) | (1u << 1) | (std::uint32_t{128 * 1024} << 3);
    frame.push_back(static_cast<std::uint8_t>(header));
    frame.push_back(static_cast<std::uint8_t>(header >> 8));
    frame.push_back(static_cast<std::uint8_t>(header >> 16));
    frame.push_back(0x00);
  }
  return frame;
}

// A zstd frame whose header claims 2^40 bytes of content and then holds 32.
Bytes zstd_lying_frame() {
  Bytes frame{0x28, 0xb5, 0x2f, 0xfd, 0xe0};  // content size field of 8 bytes, single segment
  std::uint64_t claimed = std::uint64_t{1} << 40;
  for (int b = 0; b < 8; ++b) frame.push_back(static_cast<std::uint8_t>(claimed >> (8 * b)));
  std::uint32_t header = 1u | (0u << 1) | (32u << 3);  // last, raw, 32 bytes
  frame.push_back(static_cast<std::uint8_t>(header));
  frame.push_back(static_cast<std::uint8_t>(header >> 8));
  frame.push_back(static_cast<std::uint8_t>(header >> 16));
  Bytes body = chunk_values(32);
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

Bytes deflate_compress(const Bytes& data, int window_bits) {
  z_stream stream{};
  if (deflateInit2(&stream, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  Bytes out(deflateBound(&stream, data.size()) + 64);
  stream.next_in = const_cast<Bytef*>(data.data());
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib");
  out.resize(stream.total_out);
  return out;
}
Bytes gzip_compress(const Bytes& data) { return deflate_compress(data, 15 + 16); }
Bytes zlib_compress(const Bytes& data) { return deflate_compress(data, 15); }

Bytes bz2_compress(const Bytes& data) {
  Bytes out(data.size() + data.size() / 100 + 1024);
  unsigned int size = static_cast<unsigned int>(out.size());
  if (BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out.data()), &size,
                               const_cast<char*>(reinterpret_cast<const char*>(data.data())),
                               static_cast<unsigned int>(data.size()), 9, 0, 0) != BZ_OK)
    throw std::runtime_error("bz2");
  out.resize(size);
  return out;
}

// numcodecs LZ4: a little-endian uint32 of the decoded size, then one LZ4 block.
Bytes lz4_compress(const Bytes& data, std::uint32_t claimed_size) {
  Bytes out(4 + static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(data.size()))));
  for (int b = 0; b < 4; ++b) out[b] = static_cast<std::uint8_t>(claimed_size >> (8 * b));
  int n = LZ4_compress_default(reinterpret_cast<const char*>(data.data()), reinterpret_cast<char*>(out.data() + 4),
                               static_cast<int>(data.size()), static_cast<int>(out.size() - 4));
  if (n <= 0) throw std::runtime_error("lz4");
  out.resize(4 + static_cast<std::size_t>(n));
  return out;
}
Bytes lz4_compress(const Bytes& data) { return lz4_compress(data, static_cast<std::uint32_t>(data.size())); }

Bytes blosc_compress_bytes(const Bytes& data) {
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  int n = blosc_compress_ctx(5, 1, 2, data.size(), data.data(), out.data(), out.size(), "lz4", 0, 1);
  if (n <= 0) throw std::runtime_error("blosc");
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// A blosc frame of 32 bytes whose header claims ~2 GiB decoded.
Bytes blosc_lying_frame() {
  Bytes frame = blosc_compress_bytes(chunk_values(32));
  std::uint32_t claimed = 0x7fff0000u;
  for (int b = 0; b < 4; ++b) frame[4 + b] = static_cast<std::uint8_t>(claimed >> (8 * b));
  return frame;
}

// 64 MiB of zeros, compressed: what a 32-byte chunk must never be allowed to expand to.
const Bytes& zeros_64m() {
  static const Bytes zeros(64u << 20, 0);
  return zeros;
}

// ---- The table -----------------------------------------------------------------------------------

struct BadCase {
  BadCase(std::string name_, std::function<void(const fs::path&)> make_, ErrorKind kind_,
          std::vector<std::string> fragments_, std::string codec_ = {})
      : name(std::move(name_)), make(std::move(make_)), kind(kind_), fragments(std::move(fragments_)),
        codec(std::move(codec_)) {}
  std::string name;
  std::function<void(const fs::path& array)> make;
  ErrorKind kind;
  std::vector<std::string> fragments;  // each must appear in the message
  std::string codec;                    // run only when this codec is registered
};

std::ostream& operator<<(std::ostream& out, const BadCase& c) { return out << c.name; }

// A case whose array is the v3 base with `edit` applied to its metadata.
BadCase v3_meta(std::string name, std::function<void(json&)> edit, ErrorKind kind, std::vector<std::string> fragments) {
  return {std::move(name),
          [edit](const fs::path& a) {
            json doc = v3_doc();
            edit(doc);
            put_json(a / "zarr.json", doc);
            test::write_bytes(a / "c/0/0", chunk_values(32));
          },
          kind, [&] {
            fragments.insert(fragments.begin(), "zarr.json");
            return fragments;
          }()};
}

BadCase v2_meta(std::string name, std::function<void(json&)> edit, ErrorKind kind, std::vector<std::string> fragments) {
  return {std::move(name),
          [edit](const fs::path& a) {
            json doc = v2_doc();
            edit(doc);
            put_json(a / ".zarray", doc);
            test::write_bytes(a / "0.0", chunk_values(32));
          },
          kind, [&] {
            fragments.insert(fragments.begin(), ".zarray");
            return fragments;
          }()};
}

// A case whose metadata is fine and whose chunk (or shard) file `key` holds `bytes`.
BadCase chunk_case(std::string name, json doc, std::string key, Bytes bytes, ErrorKind kind,
                   std::vector<std::string> fragments, std::string codec = {}) {
  return {std::move(name),
          [doc, key, bytes](const fs::path& a) {
            put_json(a / (doc["zarr_format"] == 3 ? "zarr.json" : ".zarray"), doc);
            test::write_bytes(a / key, bytes);
          },
          kind, [&] {
            fragments.insert(fragments.begin(), key);
            return fragments;
          }(),
          std::move(codec)};
}

std::vector<BadCase> metadata_cases() {
  const auto M = ErrorKind::invalid_metadata;
  const auto U = ErrorKind::unsupported;
  std::vector<BadCase> cases;
  auto text_case = [&](std::string name, std::string file, std::string text) {
    cases.push_back({name, [file, text](const fs::path& a) { test::write_text(a / file, text); }, M, {file}});
  };
  text_case("v3_truncated_json", "zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [4)");
  text_case("v3_empty_file", "zarr.json", "");
  text_case("v3_json_array", "zarr.json", "[1, 2, 3]");
  text_case("v3_not_utf8", "zarr.json", "{\"zarr_format\": \"\xff\xfe\"}");
  text_case("v3_trailing_garbage", "zarr.json", v3_doc().dump() + " }");
  text_case("v3_nesting_bomb", "zarr.json",
            "{\"attributes\": " + std::string(200000, '[') + std::string(200000, ']') + "}");
  text_case("v2_malformed_json", ".zarray", "{'zarr_format': 2}");
  cases.push_back({"v2_malformed_zattrs",
                   [](const fs::path& a) {
                     put_json(a / ".zarray", v2_doc());
                     test::write_text(a / ".zattrs", "{\"a\": nan}");
                   },
                   M,
                   {".zattrs"}});

  for (const char* field : {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "fill_value", "codecs"})
    cases.push_back(v3_meta(fmt::format("v3_missing_{}", field), [field](json& d) { d.erase(field); }, M, {field, "missing"}));
  cases.push_back(v3_meta("v3_missing_chunk_shape", [](json& d) { d["chunk_grid"].erase("configuration"); }, M, {"chunk_shape"}));
  cases.push_back(v3_meta("v3_zarr_format_string", [](json& d) { d["zarr_format"] = "3"; }, M, {"zarr_format"}));
  cases.push_back(v3_meta("v3_zarr_format_2", [](json& d) { d["zarr_format"] = 2; }, M, {"zarr_format"}));
  cases.push_back(v3_meta("v3_node_type_group", [](json& d) { d["node_type"] = "group"; }, M, {"node_type"}));
  cases.push_back(v3_meta("v3_node_type_number", [](json& d) { d["node_type"] = 1; }, M, {"node_type"}));
  cases.push_back(v3_meta("v3_shape_string", [](json& d) { d["shape"] = "4,4"; }, M, {"shape"}));
  cases.push_back(v3_meta("v3_shape_negative", [](json& d) { d["shape"] = {4, -4}; }, M, {"shape", "negative"}));
  cases.push_back(v3_meta("v3_shape_fraction", [](json& d) { d["shape"] = {4, 4.5}; }, M, {"shape"}));
  cases.push_back(v3_meta("v3_shape_null_extent", [](json& d) { d["shape"] = {4, nullptr}; }, M, {"shape"}));
  cases.push_back(v3_meta("v3_chunk_shape_zero", [](json& d) { d["chunk_grid"]["configuration"]["chunk_shape"] = {4, 0}; }, M,
                          {"chunk_shape", "zero"}));
  cases.push_back(v3_meta("v3_chunk_shape_negative",
                          [](json& d) { d["chunk_grid"]["configuration"]["chunk_shape"] = {-4, 4}; }, M, {"chunk_shape"}));
  cases.push_back(v3_meta("v3_rank_mismatch", [](json& d) { d["chunk_grid"]["configuration"]["chunk_shape"] = {4}; }, M,
                          {"chunk_shape", "dimensions"}));
  cases.push_back(v3_meta("v3_rank_mismatch_dimension_names", [](json& d) { d["dimension_names"] = {"y"}; }, M,
                          {"dimension_names"}));
  cases.push_back(v3_meta("v3_chunk_bytes_overflow",
                          [](json& d) {
                            d["shape"] = {4, 4, 4};
                            d["chunk_grid"]["configuration"]["chunk_shape"] = {4294967296ull, 4294967296ull, 2};
                          },
                          M, {"chunk_shape", "overflow"}));
  cases.push_back(v3_meta("v3_chunk_bytes_too_large",
                          [](json& d) { d["chunk_grid"]["configuration"]["chunk_shape"] = {1048576, 1048576}; }, U,
                          {"chunk_shape"}));
  cases.push_back(v3_meta("v3_shape_bytes_overflow", [](json& d) { d["shape"] = {4294967296ull, 4294967296ull}; }, M, {"shape"}));
  cases.push_back(v3_meta("v3_shape_too_many_dimensions",
                          [](json& d) {
                            d["shape"] = std::vector<int>(40, 1);
                            d["chunk_grid"]["configuration"]["chunk_shape"] = std::vector<int>(40, 1);
                          },
                          M, {"shape"}));
  cases.push_back(v3_meta("v3_unknown_data_type", [](json& d) { d["data_type"] = "float8_e4m3"; }, U, {"data_type", "float8_e4m3"}));
  cases.push_back(v3_meta("v3_data_type_object_dtype", [](json& d) { d["data_type"] = "string"; }, U, {"data_type"}));
  cases.push_back(v3_meta("v3_data_type_number", [](json& d) { d["data_type"] = 16; }, M, {"data_type"}));
  cases.push_back(v3_meta("v3_unknown_chunk_grid", [](json& d) { d["chunk_grid"]["name"] = "rectangular"; }, U, {"chunk_grid"}));
  cases.push_back(v3_meta("v3_unknown_codec", [](json& d) { d["codecs"].push_back({{"name", "lzma_turbo"}}); }, U,
                          {"lzma_turbo"}));
  cases.push_back(v3_meta("v3_codecs_empty", [](json& d) { d["codecs"] = json::array(); }, M, {"codecs"}));
  cases.push_back(v3_meta("v3_codecs_not_a_list", [](json& d) { d["codecs"] = {{"name", "bytes"}}; }, M, {"codecs"}));
  cases.push_back(v3_meta("v3_bytes_without_endian", [](json& d) { d["codecs"][0].erase("configuration"); }, M,
                          {"bytes", "endian"}));
  cases.push_back(v3_meta("v3_bytes_bad_endian", [](json& d) { d["codecs"][0]["configuration"]["endian"] = "pdp"; }, M,
                          {"bytes", "endian"}));
  cases.push_back(v3_meta("v3_two_array_to_bytes_codecs", [](json& d) { d["codecs"].push_back(d["codecs"][0]); }, M,
                          {"bytes"}));
  cases.push_back(v3_meta("v3_crc32c_before_bytes",
                          [](json& d) { d["codecs"].insert(d["codecs"].begin(), json{{"name", "crc32c"}}); }, M, {"crc32c"}));
  cases.push_back(v3_meta("v3_transpose_bad_order",
                          [](json& d) {
                            d["codecs"].insert(d["codecs"].begin(),
                                               json{{"name", "transpose"}, {"configuration", {{"order", {0, 0}}}}});
                          },
                          M, {"transpose", "order"}));
  cases.push_back(v3_meta("v3_sharding_not_dividing",
                          [](json& d) {
                            d["codecs"] = sharded_doc()["codecs"];
                            d["codecs"][0]["configuration"]["chunk_shape"] = {3, 4};
                          },
                          M, {"sharding_indexed", "divide"}));
  cases.push_back(v3_meta("v3_sharding_index_codecs_wrong_type",
                          [](json& d) {
                            d["codecs"] = sharded_doc()["codecs"];
                            d["codecs"][0]["configuration"]["index_codecs"] = json::array({7});
                          },
                          M, {"index_codecs"}));
  cases.push_back(v3_meta("v3_unknown_field", [](json& d) { d["chunk_memory_layout"] = "tiled"; }, U,
                          {"chunk_memory_layout", "must_understand"}));
  cases.push_back(v3_meta("v3_unknown_field_must_understand_true",
                          [](json& d) { d["extension"] = {{"must_understand", true}}; }, U, {"extension"}));
  cases.push_back(v3_meta("v3_unknown_field_name_with_newline",
                          [](json& d) { d["evil\nerror: forged second line"] = 1; }, U, {"evil"}));
  cases.push_back(v3_meta("v3_storage_transformers", [](json& d) { d["storage_transformers"] = {{{"name", "x"}}}; }, U,
                          {"storage_transformers"}));
  cases.push_back(v3_meta("v3_separator_leaving_the_folder",
                          [](json& d) { d["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", "/../"}}}}; },
                          M, {"separator"}));
  cases.push_back(v3_meta("v3_unknown_chunk_key_encoding", [](json& d) { d["chunk_key_encoding"]["name"] = "hashed"; }, U,
                          {"chunk_key_encoding"}));
  cases.push_back(v3_meta("v3_fill_value_string", [](json& d) { d["fill_value"] = "zero"; }, M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_out_of_range", [](json& d) { d["fill_value"] = 65536; }, M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_negative_unsigned", [](json& d) { d["fill_value"] = -1; }, M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_fraction", [](json& d) { d["fill_value"] = 0.5; }, M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_null", [](json& d) { d["fill_value"] = nullptr; }, M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_list", [](json& d) { d["fill_value"] = {1, 2}; }, M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_float_bad_hex",
                          [](json& d) {
                            d["data_type"] = "float32";
                            d["fill_value"] = "0x12";
                          },
                          M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_bool_as_number",
                          [](json& d) {
                            d["data_type"] = "bool";
                            d["fill_value"] = 1;
                          },
                          M, {"fill_value"}));
  cases.push_back(v3_meta("v3_fill_value_complex_short",
                          [](json& d) {
                            d["data_type"] = "complex64";
                            d["fill_value"] = {1.0};
                          },
                          M, {"fill_value"}));

  cases.push_back(v2_meta("v2_zarr_format_3", [](json& d) { d["zarr_format"] = 3; }, M, {"zarr_format"}));
  cases.push_back(v2_meta("v2_missing_dtype", [](json& d) { d.erase("dtype"); }, M, {"dtype", "missing"}));
  cases.push_back(v2_meta("v2_missing_chunks", [](json& d) { d.erase("chunks"); }, M, {"chunks", "missing"}));
  cases.push_back(v2_meta("v2_object_dtype", [](json& d) { d["dtype"] = "|O"; }, U, {"dtype", "object"}));
  cases.push_back(v2_meta("v2_structured_dtype", [](json& d) { d["dtype"] = json::parse(R"([["x", "<f4"]])"); }, U,
                          {"dtype"}));
  cases.push_back(v2_meta("v2_string_dtype", [](json& d) { d["dtype"] = "<U12"; }, U, {"dtype"}));
  cases.push_back(v2_meta("v2_unknown_dtype", [](json& d) { d["dtype"] = "<f16"; }, U, {"dtype"}));
  cases.push_back(v2_meta("v2_pickle_filter", [](json& d) { d["filters"] = json::parse(R"([{"id": "pickle", "protocol": 5}])"); },
                          U, {"pickle", "refused"}));
  cases.push_back(v2_meta("v2_pickle_compressor", [](json& d) { d["compressor"] = {{"id", "pickle"}}; }, U, {"pickle"}));
  cases.push_back(v2_meta("v2_vlen_filter", [](json& d) { d["filters"] = json::parse(R"([{"id": "vlen-utf8"}])"); }, U,
                          {"vlen-utf8"}));
  cases.push_back(v2_meta("v2_unknown_compressor", [](json& d) { d["compressor"] = {{"id", "snappy9000"}}; }, U, {"snappy9000"}));
  cases.push_back(v2_meta("v2_compressor_without_id", [](json& d) { d["compressor"] = {{"level", 1}}; }, M, {"id"}));
  cases.push_back(v2_meta("v2_separator_leaving_the_folder", [](json& d) { d["dimension_separator"] = "/../"; }, M,
                          {"dimension_separator"}));
  cases.push_back(v2_meta("v2_separator_backslash", [](json& d) { d["dimension_separator"] = "\\"; }, M,
                          {"dimension_separator"}));
  cases.push_back(v2_meta("v2_order_k", [](json& d) { d["order"] = "K"; }, M, {"order"}));
  cases.push_back(v2_meta("v2_chunks_negative", [](json& d) { d["chunks"] = {4, -1}; }, M, {"chunks"}));
  cases.push_back(v2_meta("v2_chunks_zero", [](json& d) { d["chunks"] = {0, 4}; }, M, {"chunks"}));
  cases.push_back(v2_meta("v2_rank_mismatch", [](json& d) { d["chunks"] = {4, 4, 4}; }, M, {"chunks"}));
  cases.push_back(v2_meta("v2_fill_value_string", [](json& d) { d["fill_value"] = "zero"; }, M, {"fill_value"}));
  cases.push_back(v2_meta("v2_fill_value_out_of_range", [](json& d) { d["fill_value"] = 1e30; }, M, {"fill_value"}));
  cases.push_back(v2_meta("v2_filters_not_a_list", [](json& d) { d["filters"] = {{"id", "delta"}}; }, M, {"filters"}));
  // Bare NaN / Infinity are accepted in attributes only (what zarr-python writes); a .zarray holding
  // one is still not JSON. zarr-python writes a NaN fill value as the string "NaN".
  text_case("v2_bare_nan_fill_value", ".zarray", R"({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f4",
                                                   "fill_value": NaN, "order": "C", "compressor": null, "filters": null})");
  text_case("v3_bare_infinity_outside_attributes", "zarr.json",
            R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32", "fill_value": -Infinity,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})");
  cases.push_back(v3_meta("v3_fill_value_long_string_with_escapes",
                          [](json& d) { d["fill_value"] = "zero\nerror: forged\x1b[31m" + std::string(100000, 'z'); }, M,
                          {"fill_value", "(100023 bytes)"}));
  return cases;
}

std::vector<BadCase> store_cases() {
  const auto C = ErrorKind::corrupt_data;
  std::vector<BadCase> cases;
  cases.push_back({"metadata_is_a_directory", [](const fs::path& a) { fs::create_directories(a / "zarr.json"); }, C,
                   {"zarr.json", "regular file"}});
  cases.push_back({"metadata_too_large",
                   [](const fs::path& a) {
                     test::write_text(a / "zarr.json", "{");
                     fs::resize_file(a / "zarr.json", std::uintmax_t{3} << 30);  // sparse: nothing is read
                   },
                   C,
                   {"zarr.json", "bytes"}});
  cases.push_back({"chunk_is_a_directory",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", v3_doc());
                     fs::create_directories(a / "c/0/0");
                   },
                   C,
                   {"c/0/0", "regular file"}});
  cases.push_back({"chunk_symlink_out_of_the_folder",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", v3_doc());
                     test::write_bytes(a.parent_path() / "secret", chunk_values(32));
                     fs::create_directories(a / "c/0");
                     fs::create_symlink(a.parent_path() / "secret", a / "c/0/0");
                   },
                   ErrorKind::invalid_argument,
                   {"c/0/0", "outside"}});
  cases.push_back({"chunk_relative_symlink_out_of_the_folder",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", v3_doc());
                     test::write_bytes(a.parent_path() / "secret", chunk_values(32));
                     fs::create_directories(a / "c/0");
                     fs::create_symlink("../../../secret", a / "c/0/0");
                   },
                   ErrorKind::invalid_argument,
                   {"c/0/0", "outside"}});
  cases.push_back({"chunk_folder_symlink_out_of_the_folder",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", v3_doc());
                     test::write_bytes(a.parent_path() / "elsewhere/0/0", chunk_values(32));
                     fs::create_directories(a);
                     fs::create_directory_symlink(a.parent_path() / "elsewhere", a / "c");
                   },
                   ErrorKind::invalid_argument,
                   {"c/0/0", "outside"}});
  // Loops of links inside the folder: refused as loops (ELOOP), not as escapes.
  cases.push_back({"chunk_symlink_loop",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", v3_doc());
                     fs::create_directories(a / "c/0");
                     fs::create_symlink("1", a / "c/0/0");
                     fs::create_symlink("0", a / "c/0/1");
                   },
                   ErrorKind::io,
                   {"c/0/0", "loop of symbolic links", "ELOOP"}});
  cases.push_back({"metadata_symlink_loop",
                   [](const fs::path& a) {
                     fs::create_directories(a);
                     fs::create_symlink("zarr.json", a / "zarr.json");
                   },
                   ErrorKind::io,
                   {"zarr.json", "loop of symbolic links"}});
  cases.push_back({"metadata_symlink_out_of_the_folder",
                   [](const fs::path& a) {
                     put_json(a.parent_path() / "elsewhere.json", v3_doc());
                     fs::create_directories(a);
                     fs::create_symlink(a.parent_path() / "elsewhere.json", a / "zarr.json");
                   },
                   ErrorKind::invalid_argument,
                   {"zarr.json", "outside"}});
  return cases;
}

std::vector<BadCase> chunk_cases() {
  const auto C = ErrorKind::corrupt_data;
  std::vector<BadCase> cases;
  json crc = v3_doc();
  crc["codecs"].push_back({{"name", "crc32c"}});
  json big = v3_doc();
  big["codecs"][0]["configuration"]["endian"] = "big";
  cases.push_back(chunk_case("chunk_truncated", v3_doc(), "c/0/0", chunk_values(31), C, {"31"}));
  cases.push_back(chunk_case("chunk_over_long", v3_doc(), "c/0/0", chunk_values(33), C, {"33"}));
  cases.push_back(chunk_case("chunk_empty", v3_doc(), "c/0/0", {}, C, {"0 bytes"}));
  cases.push_back(chunk_case("chunk_big_endian_truncated", big, "c/0/0", chunk_values(30), C, {"bytes", "30"}));
  cases.push_back(chunk_case("v2_chunk_truncated", v2_doc(), "0.0", chunk_values(7), C, {"7"}));
  json nested = v2_doc();
  nested["dimension_separator"] = "/";
  cases.push_back(chunk_case("v2_nested_chunk_over_long", nested, "0/0", chunk_values(64), C, {"64"}));
  Bytes good_crc = chunk_values(32);
  {
    std::uint32_t sum = codec::crc32c(std::as_bytes(std::span(good_crc)));
    for (int b = 0; b < 4; ++b) good_crc.push_back(static_cast<std::uint8_t>(sum >> (8 * b)));
  }
  Bytes flipped = good_crc;
  flipped[10] ^= 0x01;
  cases.push_back(chunk_case("crc32c_mismatch", crc, "c/0/0", flipped, C, {"crc32c", "mismatch"}));
  Bytes bad_sum = good_crc;
  bad_sum.back() ^= 0x80;
  cases.push_back(chunk_case("crc32c_checksum_corrupt", crc, "c/0/0", bad_sum, C, {"crc32c"}));
  cases.push_back(chunk_case("crc32c_too_short", crc, "c/0/0", {1, 2, 3}, C, {"crc32c"}));
  Bytes crc_long = chunk_values(64);
  cases.push_back(chunk_case("crc32c_over_long", crc, "c/0/0", crc_long, C, {"64"}));
  cases.push_back({"chunk_sparse_gigabyte",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", v3_doc());
                     test::write_bytes(a / "c/0/0", {1});
                     fs::resize_file(a / "c/0/0", std::uintmax_t{1} << 30);
                   },
                   C,
                   {"c/0/0", "1073741824"}});
  cases.push_back({"crc32c_chunk_sparse_gigabyte",
                   [crc](const fs::path& a) {
                     put_json(a / "zarr.json", crc);
                     test::write_bytes(a / "c/0/0", {1});
                     fs::resize_file(a / "c/0/0", std::uintmax_t{1} << 30);
                   },
                   C,
                   {"c/0/0", "1073741824"}});

  // Shards: inner chunks of 32 bytes at 0, 32, 64, 96; a 68-byte index.
  const std::vector<std::uint64_t> good{0, 32, 32, 32, 64, 32, 96, 32};
  auto with = [&](std::size_t entry, std::uint64_t offset, std::uint64_t nbytes) {
    auto pairs = good;
    pairs[2 * entry] = offset;
    pairs[2 * entry + 1] = nbytes;
    return pairs;
  };
  json shard = sharded_doc();
  cases.push_back(chunk_case("shard_empty", shard, "c/0/0", {}, C, {"shorter than its 68 byte index"}));
  cases.push_back(chunk_case("shard_shorter_than_index", shard, "c/0/0", chunk_values(67), C, {"index"}));
  Bytes bad_index_crc = shard_with(good);
  bad_index_crc[130] ^= 0x20;
  cases.push_back(chunk_case("shard_index_crc32c_mismatch", shard, "c/0/0", bad_index_crc, C, {"crc32c", "index"}));
  cases.push_back(chunk_case("shard_entry_out_of_bounds", shard, "c/0/0", shard_with(with(3, 96, 500)), C,
                             {"[1, 1]", "past the end"}));
  cases.push_back(chunk_case("shard_entry_offset_out_of_bounds", shard, "c/0/0", shard_with(with(1, 1u << 30, 32)), C,
                             {"[0, 1]", "past the end"}));
  cases.push_back(chunk_case("shard_entry_overflows", shard, "c/0/0", shard_with(with(2, kMissing - 16, 32)), C,
                             {"[1, 0]", "overflows"}));
  cases.push_back(chunk_case("shard_entry_half_missing_offset", shard, "c/0/0", shard_with(with(0, kMissing, 32)), C,
                             {"[0, 0]", "half-missing"}));
  cases.push_back(chunk_case("shard_entry_half_missing_nbytes", shard, "c/0/0", shard_with(with(0, 0, kMissing)), C,
                             {"[0, 0]", "half-missing"}));
  cases.push_back(chunk_case("shard_entry_overlapping_index", shard, "c/0/0", shard_with(with(3, 110, 32)), C,
                             {"[1, 1]", "overlaps the shard index"}));
  cases.push_back(chunk_case("shard_entry_overlapping_index_at_start", sharded_doc("start"), "c/0/0",
                             shard_with({0, 32, 68, 32, 100, 32, 132, 32}, true), C, {"[0, 0]", "overlaps"}));
  cases.push_back(chunk_case("shard_entry_too_large", shard, "c/0/0",
                             shard_with(with(0, 0, 96), false, 128), C, {"[0, 0]", "larger than"}));
  cases.push_back(chunk_case("shard_inner_chunk_truncated", shard, "c/0/0", shard_with(with(1, 32, 31)), C,
                             {"bytes", "31"}));
  cases.push_back({"shard_is_a_directory",
                   [](const fs::path& a) {
                     put_json(a / "zarr.json", sharded_doc());
                     fs::create_directories(a / "c/0/0");
                   },
                   C,
                   {"c/0/0", "regular file"}});
  return cases;
}

// Compressor cases: (name, metadata doc, chunk key, encoder of a whole chunk's bytes).
struct Compressor {
  std::string codec;   // the registered name
  std::string short_name;
  json doc;
  std::string key;
  std::function<Bytes(const Bytes&)> encode;
  std::vector<std::pair<std::string, std::function<Bytes()>>> lies;  // frames whose header lies
};

std::vector<Compressor> compressors() {
  auto v3_with = [](json codec) {
    json doc = v3_doc();
    doc["codecs"].push_back(codec);
    return doc;
  };
  auto v2_with = [](json compressor) {
    json doc = v2_doc();
    doc["compressor"] = compressor;
    return doc;
  };
  std::vector<Compressor> list;
  list.push_back({"zstd", "zstd", v3_with({{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", false}}}}),
                  "c/0/0", zstd_compress,
                  {{"claims_a_terabyte", zstd_lying_frame}, {"rle_bomb_1gib", [] { return zstd_rle_bomb(1); }}}});
  list.push_back({"gzip", "gzip", v3_with({{"name", "gzip"}, {"configuration", {{"level", 5}}}}), "c/0/0", gzip_compress, {}});
  list.push_back({"blosc", "blosc",
                  v3_with({{"name", "blosc"},
                           {"configuration",
                            {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}}),
                  "c/0/0", blosc_compress_bytes, {{"claims_two_gib", blosc_lying_frame}}});
  list.push_back({"numcodecs.zstd", "zstd", v2_with({{"id", "zstd"}, {"level", 1}}), "0.0", zstd_compress,
                  {{"claims_a_terabyte", zstd_lying_frame}}});
  list.push_back({"numcodecs.zlib", "zlib", v2_with({{"id", "zlib"}, {"level", 1}}), "0.0", zlib_compress, {}});
  list.push_back({"numcodecs.gzip", "gzip", v2_with({{"id", "gzip"}, {"level", 1}}), "0.0", gzip_compress, {}});
  list.push_back({"numcodecs.bz2", "bz2", v2_with({{"id", "bz2"}, {"level", 1}}), "0.0", bz2_compress, {}});
  list.push_back({"numcodecs.lz4", "lz4", v2_with({{"id", "lz4"}, {"acceleration", 1}}), "0.0",
                  [](const Bytes& d) { return lz4_compress(d); },
                  {{"claims_four_gib", [] { return lz4_compress(chunk_values(32), 0xffffffffu); }},
                   {"claims_fewer_bytes", [] { return lz4_compress(chunk_values(32), 16); }}}});
  list.push_back({"numcodecs.blosc", "blosc",
                  v2_with({{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}), "0.0",
                  blosc_compress_bytes, {{"claims_two_gib", blosc_lying_frame}}});
  return list;
}

std::vector<BadCase> compressor_cases() {
  const auto C = ErrorKind::corrupt_data;
  std::vector<BadCase> cases;
  for (const auto& c : compressors()) {
    std::string prefix = c.codec;
    std::replace(prefix.begin(), prefix.end(), '.', '_');
    auto add = [&](std::string what, std::function<Bytes()> bytes, std::vector<std::string> fragments) {
      fragments.insert(fragments.begin(), c.key);
      json doc = c.doc;
      std::string key = c.key;
      cases.push_back({prefix + "_" + what,
                       [doc, key, bytes](const fs::path& a) {
                         put_json(a / (doc["zarr_format"] == 3 ? "zarr.json" : ".zarray"), doc);
                         test::write_bytes(a / key, bytes());
                       },
                       C, fragments, c.codec});
    };
    auto encode = c.encode;
    add("garbage", [] { return Bytes(40, 0xab); }, {c.short_name});
    add("empty", [] { return Bytes(); }, {c.short_name});
    add("truncated", [encode] {
      Bytes frame = encode(chunk_values(32));
      frame.resize(frame.size() / 2);
      return frame;
    }, {c.short_name});
    add("decodes_short", [encode] { return encode(chunk_values(30)); }, {});
    add("decodes_long", [encode] { return encode(chunk_values(34)); }, {});
    add("bomb_64mib", [encode] { return encode(zeros_64m()); }, {});
    for (const auto& [what, bytes] : c.lies) add(what, bytes, {});
  }
  return cases;
}

std::vector<BadCase> all_cases() {
  std::vector<BadCase> cases;
  for (auto part : {metadata_cases(), store_cases(), chunk_cases(), compressor_cases()})
    cases.insert(cases.end(), part.begin(), part.end());
  return cases;
}

// ---- The harness ---------------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, FailsCleanlyWithTheRightError) {
  const BadCase& c = GetParam();
  if (!c.codec.empty()) {
    ASSERT_NO_THROW(codec::codec_kind(c.codec)) << "codec " << c.codec << " is not registered";
  }
  test::TempDir dir;
  fs::path array = dir / "array";
  c.make(array);

  for (unsigned threads : {1u, 4u}) {
    SCOPED_TRACE(fmt::format("{} threads", threads));
    try {
      Settings settings;
      settings.threads = threads;
      Array::open(array).read({}, Device::cpu, settings);
      ADD_FAILURE() << "read succeeded";
    } catch (const Error& e) {
      std::string message = e.what();
      EXPECT_EQ(e.kind(), c.kind) << to_string(e.kind()) << ": " << message;
      for (const auto& fragment : c.fragments)
        EXPECT_NE(message.find(fragment), std::string::npos) << "\"" << fragment << "\" missing from: " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line message: " << message;
      // Untrusted text reaches messages escaped and shortened: no raw control or invalid bytes.
      EXPECT_TRUE(is_printable(message)) << "unprintable message: " << message;
      EXPECT_LT(message.size(), 2048u) << message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a zarrdirect::Error: " << typeid(e).name() << ": " << e.what();
    }
  }

  auto result = test::run_command(fmt::format("'{}' read -q '{}'", test::cli_path(), array.string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  auto lines = lines_of(result.output);
  ASSERT_EQ(lines.size(), 1u) << result.output;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << result.output;
  EXPECT_TRUE(is_printable(lines[0])) << result.output;

  // info reads only metadata: it succeeds or fails the same clean way, never with a signal.
  auto info = test::run_command(fmt::format("'{}' info --json '{}'", test::cli_path(), array.string()));
  EXPECT_TRUE(info.exit_code == 0 || info.exit_code == 1) << info.exit_code << ": " << info.output;
  if (info.exit_code == 1) {
    EXPECT_EQ(lines_of(info.output).size(), 1u) << info.output;
    EXPECT_EQ(info.output.rfind("error: ", 0), 0u) << info.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInput, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& param_info) { return param_info.param.name; });

// ---- Beyond the table ----------------------------------------------------------------------------

// A zstd frame expanding to 4 GiB must fail without the process ever holding gigabytes.
TEST(BadInputMemory, ZstdBombIsStoppedBeforeItsOutputIsAllocated) {
  test::TempDir dir;
  json doc = v3_doc();
  doc["codecs"].push_back({{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", false}}}});
  put_json(dir / "a/zarr.json", doc);
  test::write_bytes(dir / "a/c/0/0", zstd_rle_bomb(4));
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  try {
    Array::open(dir / "a").read();
    ADD_FAILURE() << "bomb decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
  }
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 512 * 1024) << "KiB of peak memory grew while refusing the bomb";
}

// Reads that would leave the folder through group metadata.
TEST(BadInputGroup, MultiscaleLevelPathsStayInsideTheGroup) {
  test::TempDir dir;
  for (const char* path : {"../outside", "/etc", "a/../../b", "a\\..\\b", ""}) {
    SCOPED_TRACE(path);
    json attrs = {{"multiscales", json::array({{{"version", "0.4"},
                                                {"axes", json::array({"y", "x"})},
                                                {"datasets", json::array({{{"path", path}}})}}})}};
    test::write_text(dir / "g/.zgroup", R"({"zarr_format": 2})");
    put_json(dir / "g/.zattrs", attrs);
    try {
      Multiscale image = Multiscale::open(dir / "g");
      image.open_level(0).read();
      ADD_FAILURE() << "opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(".zattrs: multiscales[0].datasets[].path"), std::string::npos) << e.what();
    }
  }
}

TEST(BadInputGroup, MembersLinkedFromOutsideTheGroupAreRefused) {
  // A real array outside the group, and links to it inside: as a level, an array member, a group.
  test::TempDir dir;
  put_json(dir / "outside/zarr.json", v3_doc());
  test::write_text(dir / "g/.zgroup", R"({"zarr_format": 2})");
  std::filesystem::create_directory_symlink(dir / "outside", dir / "g/level");
  json attrs = {{"multiscales", json::array({{{"version", "0.4"},
                                              {"axes", json::array({"y", "x"})},
                                              {"datasets", json::array({{{"path", "level"}}})}}})}};
  put_json(dir / "g/.zattrs", attrs);
  auto expect_refused = [](auto&& open) {
    try {
      open();
      ADD_FAILURE() << "opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("resolves outside"), std::string::npos) << e.what();
    }
  };
  expect_refused([&] { Multiscale::open(dir / "g").open_level(0); });
  expect_refused([&] { Group::open(dir / "g").open_array("level"); });
  expect_refused([&] { Group::open(dir / "g").open_group("level"); });
  // The same array opened directly, by its own path, is of course readable.
  EXPECT_NO_THROW(Array::open(dir / "outside").read());
}

// ---- Metadata at scale: parsing is linear in the bytes (issue 11) ----------------------------------
//
// These took 24 s and 27-64 s with the callback parser (quadratic in the members of one object).
// Correctness is asserted, not time; run time shows in the test report.

TEST(BadInputScale, AttributesOfManyEmptyObjectsOpen) {
  test::TempDir dir;
  std::string attributes = "{";
  constexpr std::size_t kCount = 400000;
  for (std::size_t i = 0; i < kCount; ++i) attributes += fmt::format("{}\"{}\":{{}}", i ? "," : "", i);
  attributes += "}";
  std::string doc = v3_doc().dump();
  doc.insert(doc.size() - 1, ",\"attributes\":" + attributes);
  test::write_text(dir / "a/zarr.json", doc);
  Array array = Array::open(dir / "a");
  ASSERT_EQ(array.metadata().attributes.size(), kCount);
  EXPECT_EQ(array.metadata().attributes["123456"], json::object());
  EXPECT_EQ(array.metadata().shape, (std::vector<std::uint64_t>{4, 4}));
}

TEST(BadInputScale, ConsolidatedMetadataOfManyArraysOpens) {
  // A .zmetadata as zarr-python 2 writes it (indent 4, sorted keys) for 25,000 small arrays.
  test::TempDir dir;
  constexpr std::size_t kArrays = 25000;
  std::string text = "{\n    \"metadata\": {\n        \".zgroup\": {\n            \"zarr_format\": 2\n        }";
  for (std::size_t i = 0; i < kArrays; ++i) {
    text += fmt::format(R"(,
        "a{0}/.zarray": {{
            "chunks": [
                {1}
            ],
            "compressor": {{
                "blocksize": 0,
                "clevel": 5,
                "cname": "lz4",
                "id": "blosc",
                "shuffle": 1
            }},
            "dtype": "<f8",
            "fill_value": "NaN",
            "filters": null,
            "order": "C",
            "shape": [
                {1}
            ],
            "zarr_format": 2
        }},
        "a{0}/.zattrs": {{
            "index": {0},
            "offset": NaN
        }})",
                        i, i % 100 + 1);
  }
  text += "\n    },\n    \"zarr_consolidated_format\": 1\n}";
  test::write_text(dir / "g/.zgroup", "{\n    \"zarr_format\": 2\n}");
  test::write_text(dir / "g/.zmetadata", text);
  Group group = Group::open(dir / "g");
  ASSERT_TRUE(group.consolidated());
  auto members = group.member_nodes();
  ASSERT_EQ(members.size(), kArrays);
  EXPECT_TRUE(std::all_of(members.begin(), members.end(), [](const auto& m) { return m.type == NodeType::array; }));
  for (std::size_t i : {std::size_t{0}, std::size_t{12345}, kArrays - 1}) {
    ArrayMetadata metadata = group.array_metadata(fmt::format("a{}", i));
    EXPECT_EQ(metadata.shape, std::vector<std::uint64_t>{i % 100 + 1});
    EXPECT_EQ(metadata.attributes["index"], i);
    EXPECT_TRUE(std::isnan(metadata.attributes["offset"].get<double>()));
  }
}

// ---- What reference implementations write (issue 11) ----------------------------------------------

// A group written by zarr-python 2.13 (zarr.open_group, create_dataset('a', shape=(2, 3),
// dtype='f4', fill_value=np.nan, compressor=None), attrs with nan / inf / -inf, then
// consolidate_metadata), byte for byte: .zattrs and .zmetadata hold bare NaN, Infinity, -Infinity.
TEST(ReferenceWriters, ZarrPython2NanAttributesAreRead) {
  test::TempDir dir;
  const std::string zarray = R"({
    "chunks": [
        2,
        3
    ],
    "compressor": null,
    "dtype": "<f4",
    "fill_value": "NaN",
    "filters": null,
    "order": "C",
    "shape": [
        2,
        3
    ],
    "zarr_format": 2
})";
  const std::string zattrs = R"({
    "hi": Infinity,
    "lo": [
        -Infinity,
        1.5
    ],
    "scale": NaN
})";
  auto indent = [](const std::string& doc) {
    std::string out;
    for (char c : doc) out += c == '\n' ? std::string("\n        ") : std::string(1, c);
    return out;
  };
  const std::string zmetadata = "{\n    \"metadata\": {\n        \".zgroup\": {\n            \"zarr_format\": 2\n        },\n"
                                "        \"a/.zarray\": " + indent(zarray) + ",\n        \"a/.zattrs\": " + indent(zattrs) +
                                "\n    },\n    \"zarr_consolidated_format\": 1\n}";
  test::write_text(dir / "g/.zgroup", "{\n    \"zarr_format\": 2\n}");
  test::write_text(dir / "g/.zmetadata", zmetadata);
  test::write_text(dir / "g/a/.zarray", zarray);
  test::write_text(dir / "g/a/.zattrs", zattrs);
  Bytes chunk;
  for (float v : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f}) {
    std::uint8_t b[4];
    std::memcpy(b, &v, 4);
    chunk.insert(chunk.end(), b, b + 4);
  }
  test::write_bytes(dir / "g/a/0.0", chunk);

  auto check_attributes = [](const json& attrs) {
    EXPECT_TRUE(std::isnan(attrs["scale"].get<double>()));
    EXPECT_EQ(attrs["hi"].get<double>(), std::numeric_limits<double>::infinity());
    EXPECT_EQ(attrs["lo"][0].get<double>(), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(attrs["lo"][1].get<double>(), 1.5);
  };
  Array array = Array::open(dir / "g/a");
  check_attributes(array.metadata().attributes);
  NDArray values = array.read();
  const auto* data = static_cast<const float*>(values.data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(data[i], static_cast<float>(i));
  Group group = Group::open(dir / "g");
  ASSERT_TRUE(group.consolidated());
  check_attributes(group.array_metadata("a").attributes);
  EXPECT_EQ(node_kind(dir / "g"), NodeKind::group_v2);
  // The CLI reads it too.
  auto result = test::run_command(fmt::format("'{}' read -q '{}'", test::cli_path(), (dir / "g/a").string()));
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

// Blosc chunks with 16 bytes after the frame, as a C++ Zarr implementation writes them (numcodecs
// reads them): an incompressible 10000-byte chunk is then 10032 bytes, its frame 10016.
TEST(ReferenceWriters, BloscChunksWithTrailingBytesAreRead) {
  Bytes data(10000);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (auto& b : data) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    b = static_cast<std::uint8_t>(state >> 24);
  }
  Bytes compressible(10000);
  for (std::size_t i = 0; i < compressible.size(); ++i) compressible[i] = static_cast<std::uint8_t>(i / 100);
  json v3 = v3_doc();
  v3["shape"] = {10000};
  v3["data_type"] = "uint8";
  v3["chunk_grid"]["configuration"]["chunk_shape"] = {10000};
  v3["codecs"] = json::array({{{"name", "bytes"}},
                              {{"name", "blosc"},
                               {"configuration",
                                {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "noshuffle"}, {"typesize", 1}, {"blocksize", 0}}}}});
  json v2 = v2_doc();
  v2["shape"] = {10000};
  v2["chunks"] = {10000};
  v2["dtype"] = "|u1";
  v2["compressor"] = {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 0}, {"blocksize", 0}};
  for (const Bytes* values : {&data, &compressible}) {
    Bytes stored(values->size() + BLOSC_MAX_OVERHEAD);
    int n = blosc_compress_ctx(5, 0, 1, values->size(), values->data(), stored.data(), stored.size(), "lz4", 0, 1);
    ASSERT_GT(n, 0);
    stored.resize(static_cast<std::size_t>(n));
    if (values == &data) {
      ASSERT_EQ(stored.size(), 10016u);
    }
    for (int i = 0; i < 16; ++i) stored.push_back(static_cast<std::uint8_t>(0xe0 + i));
    for (const json* doc : {&v3, &v2}) {
      SCOPED_TRACE(fmt::format("{} chunk, v{}", values == &data ? "incompressible" : "compressible",
                               (*doc)["zarr_format"].get<int>()));
      test::TempDir dir;
      const bool is_v3 = (*doc)["zarr_format"] == 3;
      put_json(dir / (is_v3 ? "a/zarr.json" : "a/.zarray"), *doc);
      test::write_bytes(dir / (is_v3 ? "a/c/0" : "a/0"), stored);
      NDArray read = Array::open(dir / "a").read();
      ASSERT_EQ(read.nbytes(), values->size());
      EXPECT_EQ(std::memcmp(read.data(), values->data(), values->size()), 0);
      // A chunk one byte shorter than its header says stays corrupt.
      Bytes cut(stored.begin(), stored.end() - 17);
      test::write_bytes(dir / (is_v3 ? "a/c/0" : "a/0"), cut);
      try {
        Array::open(dir / "a").read();
        ADD_FAILURE() << "a cut frame decoded";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
        EXPECT_NE(std::string(e.what()).find("header says the chunk is"), std::string::npos) << e.what();
      }
    }
  }
}

// ---- Messages: untrusted text quoted, shortened and escaped, one line always (issue 11) -----------

// A level path holding a newline and terminal escapes: neither the library's message nor the
// CLI's output may carry them raw (they forged a second "error:" line and recoloured the terminal).
TEST(BadInputMessages, LevelPathsWithNewlinesAndEscapesStayOneLine) {
  test::TempDir dir;
  const std::string level = "0\nerror: forged line\x1b[31m\x1b]0;title\x07";
  json attrs = {{"multiscales", json::array({{{"version", "0.4"},
                                              {"axes", json::array({"y", "x"})},
                                              {"datasets", json::array({{{"path", level}}})}}})}};
  test::write_text(dir / "g/.zgroup", R"({"zarr_format": 2})");
  put_json(dir / "g/.zattrs", attrs);
  try {
    Multiscale::open(dir / "g").open_level(0).read();
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_TRUE(is_printable(message)) << message;
    EXPECT_NE(message.find(R"(0\nerror: forged line\x1b[31m)"), std::string::npos) << message;
  }
  // Without --level the CLI lists the levels (exit 2); with it, the level fails to open (exit 1):
  // both on one printable line.
  for (const auto& [options, status] : {std::pair{"", 2}, std::pair{" --level 0", 1}}) {
    auto result = test::run_command(
        fmt::format("'{}' read -q '{}'{}", test::cli_path(), (dir / "g").string(), options));
    EXPECT_EQ(result.exit_code, status) << result.output;
    auto lines = lines_of(result.output);
    ASSERT_EQ(lines.size(), 1u) << result.output;
    EXPECT_TRUE(is_printable(lines[0])) << result.output;
  }
}

// The issue's 40 MB fill value was echoed whole.
TEST(BadInputMessages, AHugeFillValueIsShortenedInTheMessage) {
  test::TempDir dir;
  json doc = v3_doc();
  doc["fill_value"] = std::string(40u << 20, '9');
  put_json(dir / "a/zarr.json", doc);
  try {
    Array::open(dir / "a");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_LT(message.size(), 400u) << message;
    EXPECT_NE(message.find("fill_value"), std::string::npos) << message;
    EXPECT_NE(message.find("(41943040 bytes)"), std::string::npos) << message;
  }
  doc["fill_value"] = std::vector<int>(1u << 20, 9);
  put_json(dir / "a/zarr.json", doc);
  try {
    Array::open(dir / "a");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
    EXPECT_NE(std::string(e.what()).find("(a list of 1048576 items)"), std::string::npos) << e.what();
  }
}

// A loop of links inside the folder was reported as "resolves outside the array folder".
TEST(BadInputMessages, ALinkLoopInsideTheFolderIsCalledALoop) {
  test::TempDir dir;
  put_json(dir / "a/zarr.json", v3_doc());
  fs::create_directories(dir / "a/c/0");
  fs::create_symlink("0", dir / "a/c/0/0");
  try {
    Array::open(dir / "a").read();
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("loop of symbolic links"), std::string::npos) << message;
    EXPECT_EQ(message.find("outside"), std::string::npos) << message;
  }
  // A group member whose folder is a loop, checked by require_beneath.
  test::write_text(dir / "g/.zgroup", R"({"zarr_format": 2})");
  fs::create_symlink("m", dir / "g/m");
  try {
    Group::open(dir / "g").open_array("m");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("loop of symbolic links"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("outside"), std::string::npos) << e.what();
  }
}

TEST(BadInputRegion, RegionsOfTheCliAreCheckedAgainstTheShape) {
  test::TempDir dir;
  put_json(dir / "a/zarr.json", v3_doc());
  for (const char* region : {"0:5", "0:2:1", "4", "-5", "0:2:0", "x", "0,0,0", "1:2,,"}) {
    auto result =
        test::run_command(fmt::format("'{}' read -q '{}' --region '{}'", test::cli_path(), (dir / "a").string(), region));
    // A region the array cannot have is a mistake on the command line: a usage error (exit 2).
    EXPECT_EQ(result.exit_code, region == std::string_view("0:5") || region == std::string_view("0:2:1") ? 0 : 2) << region << ": " << result.output;
    if (result.exit_code == 2) {
      EXPECT_EQ(lines_of(result.output).size(), 1u) << result.output;
      EXPECT_NE(result.output.find("region"), std::string::npos) << result.output;
    }
  }
}

}  // namespace
}  // namespace zarrdirect
