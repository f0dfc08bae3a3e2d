// numcodecs' bit rounding filter: `numcodecs.bitround` {keepbits}.
//
// Encoding rounds each float's mantissa to `keepbits` bits (ties to even) and zeroes the rest, so
// a compressor after it does better; the stored values are still floats of the same type, so
// decoding changes nothing.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_bitround_filter(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
