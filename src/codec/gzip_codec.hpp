// gzip: v3 `gzip` {level} and numcodecs' `numcodecs.gzip` {level}, DEFLATE in the gzip wrapper.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_gzip_codec(const nlohmann::json& configuration, const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_gzip_codec(const nlohmann::json& configuration,
                                                             const ArraySpec& decoded);

}  // namespace zarrdirect::codec
