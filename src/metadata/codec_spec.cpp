// Codec specs ("zstd:3", "blosc:lz4:5:shuffle", ...) to v2 and v3 codec metadata.
#include "zarrdirect/codec_spec.hpp"

#include <charconv>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// The spec, quoted and shortened for messages.
std::string quote_for_message(std::string_view spec) {
  std::string out;
  for (char c : spec.substr(0, 80)) out += (c >= 32 && c < 127 && c != '"') ? std::string(1, c) : fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  return fmt::format("\"{}\"{}", out, spec.size() > 80 ? "..." : "");
}

[[noreturn]] void refuse(std::string_view spec, const std::string& why) {
  throw Error(ErrorKind::invalid_argument, fmt::format("codec spec {}: {}", quote_for_message(spec), why));
}

struct ParsedSpec {
  std::string name;
  std::vector<std::string> parts;  // after the name
  bool crc32c = false;
};

ParsedSpec parse(std::string_view spec) {
  ParsedSpec parsed;
  std::string_view text = spec;
  if (auto plus = text.find('+'); plus != std::string_view::npos) {
    if (text.substr(plus + 1) != "crc32c") refuse(spec, "only \"+crc32c\" may follow the compressor");
    parsed.crc32c = true;
    text = text.substr(0, plus);
  }
  std::size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    auto colon = text.find(':', start);
    if (colon == std::string_view::npos) colon = text.size();
    std::string part(text.substr(start, colon - start));
    if (first) parsed.name = part;
    else parsed.parts.push_back(part);
    first = false;
    start = colon + 1;
  }
  if (parsed.name.empty()) refuse(spec, "is empty");
  return parsed;
}

int parse_int(std::string_view spec, const std::string& text, std::string_view what, int low, int high) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high)
    refuse(spec, fmt::format("{} must be an integer from {} to {}, not {}", what, low, high, quote_for_message(text)));
  return value;
}

void expect_parts(std::string_view spec, const ParsedSpec& parsed, std::size_t most) {
  if (parsed.parts.size() > most)
    refuse(spec, fmt::format("{} takes at most {} parameter{}", parsed.name, most, most == 1 ? "" : "s"));
}

int level_of(std::string_view spec, const ParsedSpec& parsed, std::optional<int> level, int fallback, int low, int high) {
  if (level) {
    if (*level < low || *level > high) refuse(spec, fmt::format("level {} is outside {} to {}", *level, low, high));
    return *level;
  }
  return parsed.parts.empty() ? fallback : parse_int(spec, parsed.parts[0], "the level", low, high);
}

struct BloscParams {
  std::string cname = "lz4";
  int clevel = 5;
  int shuffle = 1;  // numcodecs: 0 none, 1 byte, 2 bit
};

BloscParams blosc_params(std::string_view spec, const ParsedSpec& parsed, std::optional<int> level) {
  expect_parts(spec, parsed, 3);
  BloscParams params;
  if (!parsed.parts.empty()) {
    params.cname = parsed.parts[0];
    if (params.cname != "lz4" && params.cname != "lz4hc" && params.cname != "blosclz" && params.cname != "zstd" &&
        params.cname != "zlib")
      refuse(spec, fmt::format("blosc compressor {} is not one of lz4, lz4hc, blosclz, zstd, zlib", quote_for_message(params.cname)));
  }
  if (parsed.parts.size() > 1) params.clevel = parse_int(spec, parsed.parts[1], "the blosc level", 0, 9);
  if (level) {
    if (*level < 0 || *level > 9) refuse(spec, fmt::format("blosc level {} is outside 0 to 9", *level));
    params.clevel = *level;
  }
  if (parsed.parts.size() > 2) {
    const auto& shuffle = parsed.parts[2];
    if (shuffle == "noshuffle") params.shuffle = 0;
    else if (shuffle == "shuffle") params.shuffle = 1;
    else if (shuffle == "bitshuffle") params.shuffle = 2;
    else refuse(spec, fmt::format("blosc shuffle {} is not noshuffle, shuffle or bitshuffle", quote_for_message(shuffle)));
  }
  return params;
}

// The compressor as a numcodecs config ({"id": ..., ...}), or null for raw.
nlohmann::json numcodecs_config(std::string_view spec, const ParsedSpec& parsed, std::optional<int> level) {
  const std::string& name = parsed.name;
  if (name == "raw" || name == "none") {
    expect_parts(spec, parsed, 0);
    return nullptr;
  }
  if (name == "zstd") {
    expect_parts(spec, parsed, 1);
    return {{"id", "zstd"}, {"level", level_of(spec, parsed, level, 3, -131072, 22)}};
  }
  if (name == "gzip" || name == "zlib") {
    expect_parts(spec, parsed, 1);
    return {{"id", name}, {"level", level_of(spec, parsed, level, name == "gzip" ? 6 : 1, 0, 9)}};
  }
  if (name == "bz2") {
    expect_parts(spec, parsed, 1);
    return {{"id", "bz2"}, {"level", level_of(spec, parsed, level, 9, 1, 9)}};
  }
  if (name == "lzma") {  // the .xz container, numcodecs' default; the level is the preset
    expect_parts(spec, parsed, 1);
    return {{"id", "lzma"}, {"format", 1}, {"check", -1}, {"preset", level_of(spec, parsed, level, 6, 0, 9)},
            {"filters", nullptr}};
  }
  if (name == "lz4") {
    expect_parts(spec, parsed, 1);
    return {{"id", "lz4"}, {"acceleration", level_of(spec, parsed, level, 1, 1, 65537)}};
  }
  if (name == "blosc") {
    auto params = blosc_params(spec, parsed, level);
    return {{"id", "blosc"}, {"cname", params.cname}, {"clevel", params.clevel}, {"shuffle", params.shuffle}, {"blocksize", 0}};
  }
  refuse(spec, fmt::format("unknown codec {} (raw, zstd, blosc, gzip, zlib, bz2, lzma, lz4)", quote_for_message(name)));
}

nlohmann::json bytes_codec(const DataType& dtype) {
  if (dtype.size == 1) return {{"name", "bytes"}, {"configuration", nlohmann::json::object()}};
  return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
}

}  // namespace

nlohmann::json v3_codecs_from_spec(std::string_view spec, const DataType& dtype, std::optional<int> level) {
  auto first = spec.find_first_not_of(" \t\n");
  if (first != std::string_view::npos && spec[first] == '[') {
    nlohmann::json list = nlohmann::json::parse(spec, nullptr, false);
    if (list.is_discarded() || !list.is_array()) refuse(spec, "is not a valid JSON codec list");
    return list;
  }
  ParsedSpec parsed = parse(spec);
  nlohmann::json codecs = nlohmann::json::array({bytes_codec(dtype)});
  nlohmann::json config = numcodecs_config(spec, parsed, level);
  if (!config.is_null()) {
    const std::string id = config["id"];
    if (id == "zstd") {
      codecs.push_back({{"name", "zstd"}, {"configuration", {{"level", config["level"]}, {"checksum", false}}}});
    } else if (id == "gzip") {
      codecs.push_back({{"name", "gzip"}, {"configuration", {{"level", config["level"]}}}});
    } else if (id == "blosc") {
      static const char* shuffles[] = {"noshuffle", "shuffle", "bitshuffle"};
      codecs.push_back({{"name", "blosc"},
                        {"configuration",
                         {{"cname", config["cname"]},
                          {"clevel", config["clevel"]},
                          {"shuffle", shuffles[config["shuffle"].get<int>()]},
                          {"typesize", dtype.size},
                          {"blocksize", 0}}}});
    } else {
      // zlib, bz2, lzma, lz4: no v3 core codec; the numcodecs.* names zarr-python 3 registers.
      nlohmann::json configuration = config;
      configuration.erase("id");
      codecs.push_back({{"name", "numcodecs." + id}, {"configuration", configuration}});
    }
  }
  if (parsed.crc32c) codecs.push_back({{"name", "crc32c"}});
  return codecs;
}

nlohmann::json v2_compressor_from_spec(std::string_view spec, const DataType&, std::optional<int> level) {
  auto first = spec.find_first_not_of(" \t\n");
  if (first != std::string_view::npos && spec[first] == '[')
    refuse(spec, "codec lists are for zarr_format 3; zarr_format 2 takes a spec such as zstd:3");
  ParsedSpec parsed = parse(spec);
  if (parsed.crc32c) refuse(spec, "zarr_format 2 has no crc32c codec");
  return numcodecs_config(spec, parsed, level);
}

nlohmann::json make_array_metadata(const ArrayLayout& layout) {
  const std::size_t rank = layout.shape.size();
  auto check_rank = [&](const std::vector<std::uint64_t>& extents, std::string_view what) {
    if (extents.size() != rank)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} has {} extents for a {}-d array", what, extents.size(), rank));
    for (auto e : extents)
      if (e == 0) throw Error(ErrorKind::invalid_argument, fmt::format("{} must be positive", what));
  };
  std::vector<std::uint64_t> chunks = layout.chunks;
  if (chunks.empty())
    for (auto e : layout.shape) chunks.push_back(std::max<std::uint64_t>(e, 1));
  check_rank(chunks, "chunks");
  if (!layout.shards.empty()) {
    if (layout.zarr_format != 3) throw Error(ErrorKind::invalid_argument, "shards need zarr_format 3");
    check_rank(layout.shards, "shards");
    for (std::size_t d = 0; d < rank; ++d)
      if (layout.shards[d] % chunks[d] != 0)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("shard extent {} is not a multiple of the chunk extent {} (dimension {})",
                                layout.shards[d], chunks[d], d));
  }
  if (!layout.attributes.is_object()) throw Error(ErrorKind::invalid_argument, "attributes must be a JSON object");

  if (layout.zarr_format == 2) {
    if (!layout.dimension_names.empty())
      throw Error(ErrorKind::invalid_argument, "dimension names need zarr_format 3");
    return {{"zarr_format", 2},
            {"shape", layout.shape},
            {"chunks", chunks},
            {"dtype", layout.dtype.numpy_typestr(ByteOrder::little)},
            {"fill_value", layout.fill_value},
            {"order", "C"},
            {"compressor", v2_compressor_from_spec(layout.codec, layout.dtype, layout.level)},
            {"filters", nullptr},
            {"dimension_separator", "."},
            {"attributes", layout.attributes}};
  }
  if (layout.zarr_format != 3)
    throw Error(ErrorKind::invalid_argument, fmt::format("zarr_format must be 2 or 3, not {}", layout.zarr_format));
  nlohmann::json codecs = v3_codecs_from_spec(layout.codec, layout.dtype, layout.level);
  std::vector<std::uint64_t> grid = chunks;
  if (!layout.shards.empty()) {
    grid = layout.shards;
    codecs = nlohmann::json::array(
        {{{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", chunks},
            {"codecs", codecs},
            {"index_codecs", nlohmann::json::array({bytes_codec(DataType{ScalarKind::unsigned_int, 8}), {{"name", "crc32c"}}})},
            {"index_location", "end"}}}}});
  }
  nlohmann::json doc = {{"zarr_format", 3},
                        {"node_type", "array"},
                        {"shape", layout.shape},
                        {"data_type", layout.dtype.name()},
                        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", grid}}}}},
                        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
                        {"fill_value", layout.fill_value},
                        {"codecs", codecs},
                        {"attributes", layout.attributes}};
  if (!layout.dimension_names.empty()) {
    if (layout.dimension_names.size() != rank)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} dimension names for a {}-d array", layout.dimension_names.size(), rank));
    nlohmann::json names = nlohmann::json::array();
    for (const auto& name : layout.dimension_names) names.push_back(name ? nlohmann::json(*name) : nlohmann::json());
    doc["dimension_names"] = names;
  }
  return doc;
}

}  // namespace zarrdirect
