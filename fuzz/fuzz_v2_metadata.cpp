// parse_v2_array_metadata on arbitrary text: the .zarray, then (after a NUL byte, if any) the
// .zattrs. Only zarrdirect::Error may come out.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "metadata/json_fields.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string_view zarray = text.substr(0, text.find('\0'));
  std::string_view zattrs = zarray.size() < text.size() ? text.substr(zarray.size() + 1) : std::string_view();
  try {
    auto doc = zarrdirect::parse_json_document(zarray, "fuzz/.zarray");
    nlohmann::json attrs = nlohmann::json::object();
    if (!zattrs.empty()) attrs = zarrdirect::parse_json_document(zattrs, "fuzz/.zattrs", zarrdirect::NonFiniteTokens::anywhere);
    auto metadata = zarrdirect::parse_v2_array_metadata(doc, attrs, "fuzz/.zarray");
    zarrdirect::fuzz::exercise_metadata(metadata, "fuzz/.zarray");
  } catch (const zarrdirect::Error&) {
  }
  return 0;
}
