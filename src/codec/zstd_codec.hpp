// Zstandard: v3 `zstd` {level, checksum} and numcodecs' `numcodecs.zstd` {level, checksum}.
//
// Both dialects store plain zstd frames, so one implementation serves both; they differ only in
// their defaults. Decoding accepts several concatenated frames, as libzstd does.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_zstd_codec(const nlohmann::json& configuration, const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_zstd_codec(const nlohmann::json& configuration,
                                                             const ArraySpec& decoded);

}  // namespace zarrdirect::codec
