// parse_v3_array_metadata on arbitrary text, as a zarr.json would hold it. Only zarrdirect::Error
// may come out; anything else (a foreign exception, a crash, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "metadata/json_fields.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string where = "fuzz/zarr.json";
  try {
    auto doc = zarrdirect::parse_json_document(std::string_view(reinterpret_cast<const char*>(data), size), where);
    auto metadata = zarrdirect::parse_v3_array_metadata(doc, where);
    zarrdirect::fuzz::exercise_metadata(metadata, where);
  } catch (const zarrdirect::Error&) {
  }
  return 0;
}
