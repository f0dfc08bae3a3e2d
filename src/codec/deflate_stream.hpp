// DEFLATE through zlib, in the two wrappers Zarr uses: zlib (RFC 1950, numcodecs.zlib) and gzip
// (RFC 1952, v3 gzip and numcodecs.gzip). Shared by the gzip and zlib codecs.
#pragma once

#include <cstdint>
#include <string_view>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

enum class DeflateWrapper { zlib, gzip };

// Inflates a whole stream into `decoded`, failing with Error(corrupt_data) naming `codec` when the
// stream is damaged, truncated, followed by garbage, or would produce more than `max_decoded_size`
// bytes. gzip input may hold several members back to back, as gzip(1) and Python's gzip accept.
void inflate_bounded(std::string_view codec, DeflateWrapper wrapper, ByteSpan encoded, ByteBuffer& decoded,
                     std::uint64_t max_decoded_size);

// Inflates a whole stream straight into `decoded`, which it must fill exactly: a stream that is
// damaged or decodes to more or fewer bytes is Error(corrupt_data). Saves the chain a scratch copy
// of the chunk (a 4 GiB chunk read in 4 GiB, not 8).
void inflate_exact(std::string_view codec, DeflateWrapper wrapper, ByteSpan encoded, MutableByteSpan decoded);

// Compresses `decoded` into one stream at `level` (0-9, or -1 for zlib's default).
void deflate_whole(std::string_view codec, DeflateWrapper wrapper, int level, ByteSpan decoded, ByteBuffer& encoded);

// The most bytes deflate_whole() or another writer's single stream takes for `decoded_size` bytes.
std::uint64_t deflate_bound(DeflateWrapper wrapper, std::uint64_t decoded_size);

// Reads the optional "level" (-1..9) of a gzip or zlib configuration.
int read_deflate_level(const nlohmann::json& configuration, std::string_view codec, int default_level);

}  // namespace zarrdirect::codec
