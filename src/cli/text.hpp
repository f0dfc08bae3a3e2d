// How `zarrdirect info` and `read` write sizes and codec chains for people.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zarrdirect::cli {

// "84 bytes", "1.5 KiB (1536 bytes)", "1.5 GiB (1610612736 bytes)": binary units, the exact
// count beside them.
std::string human_size(std::uint64_t bytes);

// A codec chain (v3 form), one codec a line: "zstd: level=1, checksum=false". A sharding codec's
// own chains follow it, indented ("  inner: bytes: endian=little", "  index: crc32c"). Values
// are shortened and escaped (printable_line).
std::vector<std::string> codec_lines(const nlohmann::json& codecs);

}  // namespace zarrdirect::cli
