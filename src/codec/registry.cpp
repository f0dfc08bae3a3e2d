#include "codec/registry.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "codec/astype_filter.hpp"
#include "codec/bitround_filter.hpp"
#include "codec/blosc_codec.hpp"
#include "codec/bytes_codec.hpp"
#include "codec/bz2_codec.hpp"
#include "codec/checksum32_codec.hpp"
#include "codec/crc32c.hpp"
#include "codec/delta_filter.hpp"
#include "codec/fixed_scale_offset_filter.hpp"
#include "codec/gzip_codec.hpp"
#include "codec/lz4_codec.hpp"
#include "codec/lzma_codec.hpp"
#include "codec/packbits_codec.hpp"
#include "codec/quantize_filter.hpp"
#include "codec/sharding.hpp"
#include "codec/shuffle_filter.hpp"
#include "codec/transpose.hpp"
#include "codec/zlib_codec.hpp"
#include "codec/zfpy_codec.hpp"
#include "codec/zstd_codec.hpp"

namespace zarrdirect::codec {
namespace {

using A2AFactory = std::function<std::unique_ptr<ArrayToArrayCodec>(const nlohmann::json&, const ArraySpec&)>;
using A2BFactory = std::function<std::shared_ptr<ArrayToBytesCodec>(const nlohmann::json&, const ArraySpec&)>;
using B2BFactory = std::function<std::unique_ptr<BytesToBytesCodec>(const nlohmann::json&, const ArraySpec&)>;

struct Registry {
  std::map<std::string, A2AFactory, std::less<>> array_to_array;
  std::map<std::string, A2BFactory, std::less<>> array_to_bytes;
  std::map<std::string, B2BFactory, std::less<>> bytes_to_bytes;
};

const Registry& registry() {
  static const Registry instance = [] {
    Registry r;
    r.array_to_array["transpose"] = make_transpose_codec;
    r.array_to_bytes["bytes"] = make_bytes_codec;
    r.array_to_bytes["sharding_indexed"] = make_sharding_codec;
    r.bytes_to_bytes["crc32c"] = make_crc32c_codec;
    // Compressors under their v3 names and their numcodecs names (v2 `compressor`, and
    // zarr-python 3's numcodecs.* codecs); one implementation per library.
    r.bytes_to_bytes["zstd"] = make_zstd_codec;
    r.bytes_to_bytes["numcodecs.zstd"] = make_numcodecs_zstd_codec;
    r.bytes_to_bytes["gzip"] = make_gzip_codec;
    r.bytes_to_bytes["numcodecs.gzip"] = make_numcodecs_gzip_codec;
    r.bytes_to_bytes["numcodecs.zlib"] = make_numcodecs_zlib_codec;
    r.bytes_to_bytes["numcodecs.bz2"] = make_numcodecs_bz2_codec;
    r.bytes_to_bytes["numcodecs.lz4"] = make_numcodecs_lz4_codec;
    r.bytes_to_bytes["numcodecs.lzma"] = make_numcodecs_lzma_codec;
    r.bytes_to_bytes["numcodecs.zfpy"] = make_numcodecs_zfpy_codec;
    r.bytes_to_bytes["blosc"] = make_blosc_codec;
    r.bytes_to_bytes["numcodecs.blosc"] = make_numcodecs_blosc_codec;
    // numcodecs' checksums: bytes->bytes wherever they stand (v2 lists them among `filters`).
    r.bytes_to_bytes["numcodecs.crc32"] = make_numcodecs_crc32_codec;
    r.bytes_to_bytes["numcodecs.adler32"] = make_numcodecs_adler32_codec;
    r.bytes_to_bytes["numcodecs.crc32c"] = make_numcodecs_crc32c_codec;
    r.bytes_to_bytes["numcodecs.fletcher32"] = make_numcodecs_fletcher32_codec;
    r.bytes_to_bytes["numcodecs.jenkins_lookup3"] = make_numcodecs_jenkins_lookup3_codec;
    // Booleans packed into bits: the element count changes, so it too runs on the stored bytes.
    r.bytes_to_bytes["numcodecs.packbits"] = make_numcodecs_packbits_codec;
    // numcodecs filters: v2 `filters` sit before the bytes codec, so they act on arrays.
    r.array_to_array["numcodecs.delta"] = make_delta_filter;
    r.array_to_array["numcodecs.fixedscaleoffset"] = make_fixed_scale_offset_filter;
    r.array_to_array["numcodecs.astype"] = make_astype_filter;
    r.array_to_array["numcodecs.quantize"] = make_quantize_filter;
    r.array_to_array["numcodecs.bitround"] = make_bitround_filter;
    r.array_to_array["numcodecs.shuffle"] = make_shuffle_filter;
    r.bytes_to_bytes["numcodecs.shuffle"] = make_shuffle_bytes_codec;
    return r;
  }();
  return instance;
}

// Codecs that would run arbitrary code or produce non-numeric data: refused by name.
bool is_refused(std::string_view name) {
  return name == "numcodecs.pickle" || name == "numcodecs.json" || name == "numcodecs.json2" ||
         name == "numcodecs.msgpack" || name == "numcodecs.msgpack2" || name == "numcodecs.categorize" ||
         name.starts_with("numcodecs.vlen");
}

[[noreturn]] void unsupported(std::string_view name) {
  if (is_refused(name))
    throw Error(ErrorKind::unsupported,
                fmt::format("codec {} is refused: it decodes to Python objects, which zarrdirect never runs", name));
  throw Error(ErrorKind::unsupported, fmt::format("unsupported codec {}", name));
}

}  // namespace

CodecKind codec_kind(std::string_view name, bool after_array_to_bytes) {
  const auto& r = registry();
  if (after_array_to_bytes && r.bytes_to_bytes.contains(name)) return CodecKind::bytes_to_bytes;
  if (r.array_to_array.contains(name)) return CodecKind::array_to_array;
  if (r.array_to_bytes.contains(name)) return CodecKind::array_to_bytes;
  if (r.bytes_to_bytes.contains(name)) return CodecKind::bytes_to_bytes;
  unsupported(name);
}

std::unique_ptr<ArrayToArrayCodec> make_array_to_array(std::string_view name, const nlohmann::json& configuration,
                                                       const ArraySpec& decoded) {
  auto it = registry().array_to_array.find(name);
  if (it == registry().array_to_array.end()) unsupported(name);
  return it->second(configuration, decoded);
}

std::shared_ptr<ArrayToBytesCodec> make_array_to_bytes(std::string_view name, const nlohmann::json& configuration,
                                                       const ArraySpec& decoded) {
  auto it = registry().array_to_bytes.find(name);
  if (it == registry().array_to_bytes.end()) unsupported(name);
  return it->second(configuration, decoded);
}

std::unique_ptr<BytesToBytesCodec> make_bytes_to_bytes(std::string_view name, const nlohmann::json& configuration,
                                                       const ArraySpec& decoded) {
  auto it = registry().bytes_to_bytes.find(name);
  if (it == registry().bytes_to_bytes.end()) unsupported(name);
  return it->second(configuration, decoded);
}

std::vector<std::string> supported_codec_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : registry().array_to_array) names.push_back(name);
  for (const auto& [name, _] : registry().array_to_bytes) names.push_back(name);
  for (const auto& [name, _] : registry().bytes_to_bytes) names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace zarrdirect::codec
