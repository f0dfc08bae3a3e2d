// Checks shared by both formats, run once parsing has filled an ArrayMetadata.
#pragma once

#include <string>

#include "zarrdirect/metadata.hpp"

namespace zarrdirect {

// The largest chunk zarrdirect reads: one chunk is decoded in memory at a time per thread, so a
// hostile chunk_shape must not be able to demand terabytes.
inline constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{16} << 30;

// Rank agreement, overflow of element and byte counts, chunk size limit. Throws
// Error(invalid_metadata) naming `where` and the field.
void validate_array_metadata(const ArrayMetadata& metadata, const std::string& where);

}  // namespace zarrdirect
