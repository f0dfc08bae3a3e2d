// The `bytes` codec (v3 core): the array's elements in C order, little- or big-endian.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

// configuration: {"endian": "little" | "big"}, required for multi-byte types.
std::shared_ptr<ArrayToBytesCodec> make_bytes_codec(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
