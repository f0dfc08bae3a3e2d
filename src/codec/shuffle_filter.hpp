// numcodecs' byte shuffle filter: `numcodecs.shuffle` {elementsize}.
//
// Encoding gathers byte 0 of every `elementsize`-byte element, then byte 1, and so on, over the
// whole chunk; decoding scatters them back. An elementsize of 0 or 1 leaves the bytes as they are.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_shuffle_filter(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
