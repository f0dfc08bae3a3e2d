// parse_region and parse_selection on arbitrary text against an arbitrary shape: the first byte
// gives the rank (0-4), the next 8 bytes per dimension its extent (any uint64), the rest is the
// text. A region that parses must be inside the shape and survive resolve_region; a selection
// that parses has a shape no larger, axis by axis, than what it selects from (lists aside).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz_support.hpp"
#include "zarrdirect/region.hpp"
#include "zarrdirect/selection.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t rank = data[0] % 5;
  if (size < 1 + 8 * rank) return 0;
  std::vector<std::uint64_t> shape(rank);
  for (std::size_t d = 0; d < rank; ++d) std::memcpy(&shape[d], data + 1 + 8 * d, 8);
  std::string_view text(reinterpret_cast<const char*>(data + 1 + 8 * rank), size - 1 - 8 * rank);
  try {
    zarrdirect::Region region = zarrdirect::parse_region(text, shape);
    if (region.size() != rank) zarrdirect::fuzz::violated("region rank");
    for (std::size_t d = 0; d < rank; ++d)
      if (region[d].start > region[d].stop || region[d].stop > shape[d]) zarrdirect::fuzz::violated("region outside the shape");
    if (zarrdirect::resolve_region(region, shape) != region) zarrdirect::fuzz::violated("resolve changed a parsed region");
    (void)zarrdirect::to_string(region);
    (void)zarrdirect::region_shape(region);
  } catch (const zarrdirect::Error& e) {
    if (e.kind() != zarrdirect::ErrorKind::invalid_argument) zarrdirect::fuzz::violated("region error of another kind");
  }
  try {
    const zarrdirect::Selection selection = zarrdirect::parse_selection(text, shape);
    (void)zarrdirect::selection_shape(selection, shape);
  } catch (const zarrdirect::Error& e) {
    if (e.kind() != zarrdirect::ErrorKind::invalid_argument) zarrdirect::fuzz::violated("selection error of another kind");
  }
  return 0;
}
