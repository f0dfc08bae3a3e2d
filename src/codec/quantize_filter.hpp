// numcodecs' quantize filter: `numcodecs.quantize` {digits, dtype, astype}.
//
// Encoding rounds each float to a multiple of a power of two fine enough for `digits` decimal
// digits, then stores it as astype; the rounding is lossy, so decoding only converts astype back
// to dtype. Both types are floating.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_quantize_filter(const nlohmann::json& configuration, const ArraySpec& decoded);

// The power of two numcodecs scales by for `digits` decimal digits, computed as it does.
double quantize_scale(std::int64_t digits);

}  // namespace zarrdirect::codec
