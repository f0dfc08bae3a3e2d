// numcodecs' byte shuffle filter: `numcodecs.shuffle` {elementsize}.
//
// Encoding gathers byte 0 of every `elementsize`-byte element, then byte 1, and so on, over the
// whole chunk; decoding scatters them back. An elementsize of 0 or 1 leaves the bytes as they are.
//
// It acts on bytes, so it comes in both kinds: before the array->bytes codec it shuffles the
// array's elements (native byte order), after it the encoded bytes (the stored byte order). The
// chain picks the kind by position: numcodecs applies a v2 filter to the stored bytes, so a
// shuffle that ends a v2 filter list, and zarr-python 3's `numcodecs.shuffle` after `bytes`, are
// the bytes kind; on big-endian data the two differ.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_shuffle_filter(const nlohmann::json& configuration, const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_shuffle_bytes_codec(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec
