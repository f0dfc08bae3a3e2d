// numcodecs' type conversion filter: `numcodecs.astype` {encode_dtype, decode_dtype}.
//
// Stores the elements converted to encode_dtype and converts them back to decode_dtype on
// decoding, with NumPy's astype rules (see numpy_scalar.hpp).
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_astype_filter(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
