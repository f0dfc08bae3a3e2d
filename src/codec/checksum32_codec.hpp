// numcodecs' 32-bit checksum codecs: `numcodecs.crc32` and `numcodecs.adler32` (zlib's, at the
// start by default), `numcodecs.crc32c` (CRC-32C, at the end by default) and
// `numcodecs.fletcher32` (HDF5's Fletcher-32 over 16-bit words, at the end) and
// `numcodecs.jenkins_lookup3` (Bob Jenkins' lookup3 hash as HDF5 uses it, at the end). Each stores its
// checksum as 4 little-endian bytes before or after the payload; decoding verifies it, and a
// mismatch is Error(corrupt_data) naming both values. Configuration: {"location": "start" | "end"}
// (fletcher32 takes none; jenkins_lookup3 takes {"initval": seed}, and no "prefix").
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

// Fletcher-32 as numcodecs computes it: sums of the data's little-endian 16-bit words modulo
// 65535, an odd last byte padded with a zero; (sum2 << 16) | sum1.
std::uint32_t fletcher32(ByteSpan data);

// A 4-byte little-endian `checksum` of the payload stored before it (`at_start`) or after it, under
// codec `name`: the one implementation behind the codecs above and v3's `crc32c` (crc32c.hpp).
std::unique_ptr<BytesToBytesCodec> make_checksum32_codec(std::string_view name,
                                                         std::function<std::uint32_t(ByteSpan)> checksum,
                                                         bool at_start);

// lookup3's hashlittle() of `data` with seed `initval`, as HDF5 and numcodecs compute it.
std::uint32_t jenkins_lookup3(ByteSpan data, std::uint32_t initval = 0);

std::unique_ptr<BytesToBytesCodec> make_numcodecs_crc32_codec(const nlohmann::json& configuration,
                                                              const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_adler32_codec(const nlohmann::json& configuration,
                                                                const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_crc32c_codec(const nlohmann::json& configuration,
                                                               const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_fletcher32_codec(const nlohmann::json& configuration,
                                                                   const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_jenkins_lookup3_codec(const nlohmann::json& configuration,
                                                                       const ArraySpec& decoded);

}  // namespace zarrdirect::codec
