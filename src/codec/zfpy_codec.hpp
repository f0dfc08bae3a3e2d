// zfp: numcodecs' `numcodecs.zfpy` {mode, tolerance, rate, precision}, through libzfp (Debian's
// libzfp-dev). numcodecs writes each chunk as one zfp stream with a full header (its scalar type,
// its dimensions and the compression mode), so decoding needs no configuration: the header is
// checked against the chunk (the same scalar type as the array, as many values), and a stream
// whose header could make libzfp read past it is decoded from a zero-padded copy long enough for
// the most bits its mode allows. int32, int64, float32 and float64 chunks of up to 4 dimensions.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_zfpy_codec(const nlohmann::json& configuration,
                                                             const ArraySpec& decoded);

}  // namespace zarrdirect::codec
