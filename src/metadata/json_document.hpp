// Metadata text to JSON, in time and memory linear in its bytes, with limits on size and depth.
//
// nlohmann's callback parser (the obvious way to limit depth) rescans the open object at every
// closing brace, which is quadratic in the members of one object: 400,000 empty objects took 24 s.
// Here a SAX handler builds the document and counts depth as it goes.
//
// Python's json module (zarr-python 2's .zattrs and .zmetadata, zarr-python 3's attributes) writes
// the bare tokens NaN, Infinity and -Infinity, which are not JSON. Where the caller allows them
// (attributes only) they become the float NaN, +inf or -inf; elsewhere they stay an error. A first
// pass over the bytes (respecting strings and escapes) finds them at token boundaries and writes
// `0` padded with spaces in their place, so the text keeps its length and error positions stay
// right; the handler, counting numbers in document order, puts the real value back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace zarrdirect {

// Metadata documents larger than this are refused before they are read (the store checks the
// file's size first). The largest consolidated metadata seen in practice is a few MiB.
constexpr std::uint64_t kMaxMetadataBytes = 64u << 20;

// Deeper nesting is refused: parsing is iterative, but copying, comparing and printing a document
// recurse once per level, and real metadata nests a few levels.
constexpr std::size_t kMaxJsonDepth = 512;

// Where the bare tokens NaN, Infinity and -Infinity are accepted.
enum class NonFiniteTokens {
  refused,        // nowhere: strict JSON (.zarray, .zgroup)
  in_attributes,  // inside a member named "attributes", ".zattrs" or ending "/.zattrs" (zarr.json, .zmetadata)
  anywhere,       // the document is attributes (.zattrs)
};

// Parses metadata text, failing with Error(invalid_metadata) naming `where` when it is larger than
// kMaxMetadataBytes, not JSON, nested deeper than kMaxJsonDepth, or not an object. Untrusted text in
// the message (the parser's last token) is escaped and shortened. Thread-safe.
nlohmann::json parse_json_document(std::string_view text, const std::string& where,
                                   NonFiniteTokens non_finite = NonFiniteTokens::refused);

// `doc` as metadata text, as zarr-python writes it: laid out as nlohmann's dump(indent, ' ', true),
// i.e. ASCII only (other characters as \uXXXX escapes: zarr-python 2 reads .zattrs and .zarray as
// ASCII and failed on raw UTF-8), and with the floats NaN, +inf and -inf written as the bare
// tokens NaN, Infinity and -Infinity (Python's json module's spelling, which parse_json_document
// reads back in attributes) rather than as null, so attributes written by zarr-python 2 keep their
// values when zarrdirect rewrites or copies them. Throws nlohmann's type_error for strings that
// are not UTF-8, as dump() does.
std::string dump_json_document(const nlohmann::json& doc, int indent = 2);

// dump_json_document(doc), checked to be text parse_json_document(text, where, non_finite) reads
// back: metadata nested deeper than kMaxJsonDepth or larger than kMaxMetadataBytes would be
// written and then make the node unreadable. Throws Error(invalid_argument) naming `where` and
// the reason before anything is written.
std::string readable_json_document(const nlohmann::json& doc, const std::string& where, NonFiniteTokens non_finite);

}  // namespace zarrdirect
