// zlib: numcodecs' `numcodecs.zlib` {level}, DEFLATE in the zlib wrapper (RFC 1950).
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_zlib_codec(const nlohmann::json& configuration,
                                                             const ArraySpec& decoded);

}  // namespace zarrdirect::codec
