// LZ4: numcodecs' `numcodecs.lz4` {acceleration}.
//
// numcodecs frames one LZ4 *block* (not the LZ4 frame format) behind a 4-byte little-endian
// count of the decoded bytes.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_lz4_codec(const nlohmann::json& configuration,
                                                            const ArraySpec& decoded);

}  // namespace zarrdirect::codec
