// bzip2: numcodecs' `numcodecs.bz2` {level} (the block size in 100 KiB units, 1-9).
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_bz2_codec(const nlohmann::json& configuration,
                                                            const ArraySpec& decoded);

}  // namespace zarrdirect::codec
