// Blosc 1: v3 `blosc` {cname, clevel, shuffle: "noshuffle"|"shuffle"|"bitshuffle", typesize,
// blocksize} and numcodecs' `numcodecs.blosc` {cname, clevel, shuffle: 0|1|2|-1, blocksize}.
//
// A Blosc chunk is self-describing (its 16-byte header names the compressor, shuffle and sizes),
// so the configuration only matters for encoding; decoding validates the header against the
// chunk before trusting it. Bytes after the frame (up to 16, as one C++ writer leaves them) are
// ignored, as numcodecs ignores them.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_blosc_codec(const nlohmann::json& configuration, const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_numcodecs_blosc_codec(const nlohmann::json& configuration,
                                                              const ArraySpec& decoded);

}  // namespace zarrdirect::codec
