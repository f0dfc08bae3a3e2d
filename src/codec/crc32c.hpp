// The `crc32c` codec (v3): a little-endian CRC-32C (Castagnoli) of the bytes, appended.
// Decoding verifies it; a mismatch is Error(corrupt_data).
#pragma once

#include <cstdint>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

// CRC-32C of `data`, continuing from `crc` (0 to start).
std::uint32_t crc32c(ByteSpan data, std::uint32_t crc = 0);

std::unique_ptr<BytesToBytesCodec> make_crc32c_codec(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
