// numcodecs' delta filter: `numcodecs.delta` {dtype, astype}.
//
// Encoding keeps the first element and replaces each later one by its difference from the one
// before, computed in dtype (integers wrap) and stored as astype. Decoding is the running sum,
// accumulated in dtype. The chunk is taken flat, in memory order.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_delta_filter(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
