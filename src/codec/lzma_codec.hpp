// LZMA: numcodecs' `numcodecs.lzma` {format, check, preset, filters}, through liblzma. The .xz
// container (format 1, numcodecs' default; concatenated streams read as Python's lzma does), the
// legacy .lzma container (format 2) and either detected (format 0) are decoded; they describe
// their own filters, so a `filters` entry is not needed to read them. Raw streams (format 3),
// which only a `filters` list describes, and writing with custom filters are refused as
// unsupported. A stream whose dictionary needs more memory than the chunk can justify is
// Error(corrupt_data) before anything is allocated for it.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_lzma_codec(const nlohmann::json& configuration,
                                                             const ArraySpec& decoded);

}  // namespace zarrdirect::codec
