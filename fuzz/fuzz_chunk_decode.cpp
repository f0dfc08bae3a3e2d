// One stored chunk decoded by every fixed chain whose codecs are registered in this build (bytes;
// bytes + crc32c; transpose; sharding, plain, nested and with compressed inner chunks; each
// compressor under its v3 and numcodecs names; the numcodecs filters that apply to uint16). Only zarrdirect::Error may come out, and no chain
// may allocate what a hostile header claims: the RSS limit of the run catches that.
//
// With ZARRDIRECT_FUZZ_WRITE_SEEDS=<folder> in the environment the target writes one valid
// encoding per chain there and exits: scripts/fuzz.sh uses that for the seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "codec/codec.hpp"
#include "codec/registry.hpp"
#include "fuzz_support.hpp"

namespace {

using nlohmann::json;
using zarrdirect::codec::CodecChain;

struct NamedChain {
  std::string name;
  CodecChain chain;
};

// Chains whose codecs exist in this build; the others are left out (and listed once on stderr).
std::vector<NamedChain>& chains() {
  static std::vector<NamedChain> list = [] {
    json le = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    json be = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
    json crc = {{"name", "crc32c"}};
    json transpose = {{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}};
    std::vector<std::pair<std::string, json>> compressors = {
        {"zstd", {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", false}}}}},
        {"zstd_checksum", {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", true}}}}},
        {"gzip", {{"name", "gzip"}, {"configuration", {{"level", 5}}}}},
        {"blosc", {{"name", "blosc"},
                   {"configuration", {{"cname", "zstd"}, {"clevel", 5}, {"shuffle", "bitshuffle"}, {"typesize", 2}, {"blocksize", 0}}}}},
        {"numcodecs.zlib", {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}}},
        {"numcodecs.gzip", {{"name", "numcodecs.gzip"}, {"configuration", {{"level", 1}}}}},
        {"numcodecs.zstd", {{"name", "numcodecs.zstd"}, {"configuration", {{"level", 1}}}}},
        {"numcodecs.bz2", {{"name", "numcodecs.bz2"}, {"configuration", {{"level", 1}}}}},
        {"numcodecs.lz4", {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}}},
        {"numcodecs.lzma", {{"name", "numcodecs.lzma"}, {"configuration", {{"preset", 1}}}}},
        {"numcodecs.lzma_alone", {{"name", "numcodecs.lzma"}, {"configuration", {{"format", 2}, {"preset", 0}}}}},
        {"numcodecs.crc32", {{"name", "numcodecs.crc32"}, {"configuration", json::object()}}},
        {"numcodecs.fletcher32", {{"name", "numcodecs.fletcher32"}, {"configuration", json::object()}}},
        {"numcodecs.packbits", {{"name", "numcodecs.packbits"}, {"configuration", json::object()}}},
        {"numcodecs.blosc", {{"name", "numcodecs.blosc"},
                             {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}}}},
    };
    std::vector<std::pair<std::string, json>> wanted = {
        {"bytes", json::array({le})},
        {"bytes_big_crc32c", json::array({be, crc})},
        {"transpose_bytes", json::array({transpose, be})},
        {"sharding", json::array({{{"name", "sharding_indexed"},
                                   {"configuration", {{"chunk_shape", {4, 4}}, {"codecs", json::array({le})}}}}})},
        {"sharding_start_crc32c",
         json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", {2, 8}}, {"codecs", json::array({le, crc})}, {"index_location", "start"}}}}})},
        {"sharding_nested",
         json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", {4, 4}},
                         {"codecs", json::array({{{"name", "sharding_indexed"},
                                                  {"configuration", {{"chunk_shape", {2, 2}}, {"codecs", json::array({le})}}}}})}}}}})},
    };
    // v2 filters (numcodecs), as the v2 metadata converts them: arithmetic filters before
    // "bytes", a trailing shuffle after it.
    json u1 = {{"name", "bytes"}, {"configuration", json::object()}};
    json zlib = {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}};
    json shuffle = {{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", 2}}}};
    wanted.push_back({"delta_zlib", json::array({{{"name", "numcodecs.delta"}, {"configuration", {{"dtype", "<u2"}}}},
                                                 le, zlib})});
    wanted.push_back({"fixedscaleoffset_zlib",
                      json::array({{{"name", "numcodecs.fixedscaleoffset"},
                                    {"configuration", {{"dtype", "<u2"}, {"astype", "|u1"}, {"scale", 0.5}, {"offset", 100}}}},
                                   u1, zlib})});
    wanted.push_back({"astype_zlib", json::array({{{"name", "numcodecs.astype"},
                                                   {"configuration", {{"encode_dtype", "|u1"}, {"decode_dtype", "<u2"}}}},
                                                  u1, zlib})});
    wanted.push_back({"shuffle_array_zlib", json::array({shuffle, le, zlib})});
    wanted.push_back({"big_shuffle_bytes_zlib", json::array({be, shuffle, zlib})});
    wanted.push_back({"big_shuffle_bytes", json::array({be, shuffle})});
    for (const auto& [name, codec] : compressors) {
      wanted.push_back({name, json::array({le, codec})});
      wanted.push_back({"sharding_" + name, json::array({{{"name", "sharding_indexed"},
                                                          {"configuration",
                                                           {{"chunk_shape", {4, 4}}, {"codecs", json::array({le, codec})}}}}})});
    }
    zarrdirect::DataType u16{zarrdirect::ScalarKind::unsigned_int, 2};
    zarrdirect::codec::ArraySpec spec{{8, 8}, u16, std::vector<std::byte>(2, std::byte{0})};
    std::vector<NamedChain> chains;
    std::string left_out;
    for (const auto& [name, codecs] : wanted) {
      try {
        chains.push_back({name, CodecChain::create(codecs, spec, name)});
      } catch (const zarrdirect::Error& e) {
        if (e.kind() != zarrdirect::ErrorKind::unsupported) throw;  // our own chains must be valid
        left_out += " " + name;
      }
    }
    // zfp takes 32- and 64-bit numbers only: its chains decode chunks of the same 128 bytes as
    // float32 and int64 (its header must match the chunk before anything is decompressed).
    json zfpy = {{"name", "numcodecs.zfpy"}, {"configuration", {{"mode", 4}, {"tolerance", 0.01}}}};
    const std::pair<const char*, zarrdirect::codec::ArraySpec> zfp_specs[] = {
        {"zfpy_float32", {{4, 8}, {zarrdirect::ScalarKind::floating, 4}, std::vector<std::byte>(4, std::byte{0})}},
        {"zfpy_int64", {{4, 4}, {zarrdirect::ScalarKind::signed_int, 8}, std::vector<std::byte>(8, std::byte{0})}},
    };
    for (const auto& [name, zfp_spec] : zfp_specs) {
      try {
        chains.push_back({name, CodecChain::create(json::array({le, zfpy}), zfp_spec, name)});
      } catch (const zarrdirect::Error& e) {
        if (e.kind() != zarrdirect::ErrorKind::unsupported) throw;
        left_out += std::string(" ") + name;
      }
    }
    if (!left_out.empty()) std::fprintf(stderr, "fuzz_chunk_decode: chains not registered in this build:%s\n", left_out.c_str());
    return chains;
  }();
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seeds = std::getenv("ZARRDIRECT_FUZZ_WRITE_SEEDS");
  if (!seeds || !*seeds) return 0;
  std::filesystem::create_directories(seeds);
  std::vector<std::uint16_t> values(64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>(i * 37 % 11);
  for (const auto& [name, chain] : chains()) {
    auto encoded = chain.encode(std::as_bytes(std::span(values)));
    std::ofstream(std::filesystem::path(seeds) / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(encoded.data()), static_cast<std::streamsize>(encoded.size()));
  }
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto encoded = std::as_bytes(std::span(data, size));
  std::vector<std::byte> decoded;
  zarrdirect::codec::Scratch scratch;
  for (const auto& [name, chain] : chains()) {
    decoded.resize(static_cast<std::size_t>(chain.decoded_spec().nbytes()));  // 128 bytes each
    try {
      chain.decode(encoded, decoded, scratch);
    } catch (const zarrdirect::Error&) {
    }
  }
  return 0;
}
