// numcodecs' `numcodecs.packbits`: booleans (one byte each, nonzero is true) packed eight to a
// byte, first element in the most significant bit, after one byte that counts the padding bits
// of the last byte (0-7). Decoding gives one byte per element, 0 or 1. No configuration.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_packbits_codec(const nlohmann::json& configuration,
                                                                 const ArraySpec& decoded);

}  // namespace zarrdirect::codec
