// Which codec names exist, what kind each is, and how each is prepared.
//
// One implementation may serve several names: v3 "zstd" and v2's "numcodecs.zstd" share the
// zstd code with different configuration dialects.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

enum class CodecKind { array_to_array, array_to_bytes, bytes_to_bytes };

// The kind of codec `name` at its place in a chain: a name with two kinds (numcodecs.shuffle) is
// bytes->bytes after the array->bytes codec and array->array before it. Throws
// Error(unsupported) "unsupported codec <name>" when unknown.
CodecKind codec_kind(std::string_view name, bool after_array_to_bytes = false);

// Each factory prepares a codec for the array spec it will decode to (its *decoded* spec).
std::unique_ptr<ArrayToArrayCodec> make_array_to_array(std::string_view name, const nlohmann::json& configuration,
                                                       const ArraySpec& decoded);
std::shared_ptr<ArrayToBytesCodec> make_array_to_bytes(std::string_view name, const nlohmann::json& configuration,
                                                       const ArraySpec& decoded);
std::unique_ptr<BytesToBytesCodec> make_bytes_to_bytes(std::string_view name, const nlohmann::json& configuration,
                                                       const ArraySpec& decoded);

// All names known, for `zarrdirect info --system` and error messages.
std::vector<std::string> supported_codec_names();

}  // namespace zarrdirect::codec
