// parse_v3_array_metadata on arbitrary text, as a zarr.json would hold it. Only zarrdirect::Error
// may come out; anything else (a foreign exception, a crash, a sanitizer report) is a finding.
// The SAX document builder must agree with nlohmann's own parser on every document it accepts
// that holds no bare NaN / Infinity.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "metadata/json_fields.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string where = "fuzz/zarr.json";
  try {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto doc = zarrdirect::parse_json_document(text, where, zarrdirect::NonFiniteTokens::in_attributes);
    if (text.find("NaN") == std::string_view::npos && text.find("Infinity") == std::string_view::npos &&
        nlohmann::json::parse(text) != doc)
      zarrdirect::fuzz::violated("the document differs from nlohmann's parse of it");
    auto metadata = zarrdirect::parse_v3_array_metadata(doc, where);
    zarrdirect::fuzz::exercise_metadata(metadata, where);
  } catch (const zarrdirect::Error&) {
  }
  return 0;
}
