#include <fmt/format.h>

#include "zarrdirect/metadata.hpp"

namespace zarrdirect {

std::string ChunkKeyEncoding::key(std::span<const std::uint64_t> coords) const {
  std::string key;
  if (kind == Kind::v3_default) {
    key = "c";
    for (auto c : coords) fmt::format_to(std::back_inserter(key), "{}{}", separator, c);
    return key;
  }
  if (coords.empty()) return "0";  // v2 names the single chunk of a 0-d array "0"
  for (std::size_t d = 0; d < coords.size(); ++d)
    fmt::format_to(std::back_inserter(key), "{}{}", d ? std::string(1, separator) : "", coords[d]);
  return key;
}

}  // namespace zarrdirect
