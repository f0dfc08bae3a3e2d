#include "metadata/validate.hpp"

#include <limits>

#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "util/checked_math.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

void validate_array_metadata(const ArrayMetadata& metadata, const std::string& where) {
  const std::string_view chunk_field = metadata.zarr_format == 3 ? "chunk_shape" : "chunks";
  if (metadata.chunk_shape.size() != metadata.shape.size())
    throw_invalid_field(where, chunk_field,
                        fmt::format("has {} dimensions, shape has {}", metadata.chunk_shape.size(),
                                    metadata.shape.size()));
  // Sizes stay within int64 (NumPy's intp; signed byte strides and offsets), so later arithmetic on
  // extents, chunk origins and strides cannot overflow, even with an empty dimension elsewhere.
  constexpr std::uint64_t kMaxSize = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (auto extent : metadata.shape)
    if (extent > kMaxSize) throw_invalid_field(where, "shape", fmt::format("has extent {}, more than 2^63-1", extent));
  // Zero extents are left out, as NumPy leaves them out of its size check: an empty dimension must
  // not hide extents whose strides would overflow, whichever dimension it is.
  std::optional<std::uint64_t> bytes = metadata.dtype.size;
  for (auto extent : metadata.shape)
    if (extent != 0 && bytes) bytes = checked_mul(*bytes, extent);
  if (!bytes || *bytes > kMaxSize)
    throw_invalid_field(where, "shape", "describes more bytes than a signed 64-bit count can hold");
  auto chunk_elements = checked_product(metadata.chunk_shape);
  auto chunk_bytes = chunk_elements ? checked_mul(*chunk_elements, metadata.dtype.size) : std::nullopt;
  if (!chunk_bytes) throw_invalid_field(where, chunk_field, "describes a chunk whose size overflows 64 bits");
  if (*chunk_bytes > kMaxChunkBytes)
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: field \"{}\" describes {} byte chunks; zarrdirect reads chunks of at most {} bytes",
                            where, chunk_field, *chunk_bytes, kMaxChunkBytes));
  if (metadata.fill_value.size() != metadata.dtype.size)
    throw_invalid_field(where, "fill_value", "does not match the data type's size");
  if (!metadata.dimension_names.empty() && metadata.dimension_names.size() != metadata.shape.size())
    throw_invalid_field(where, "dimension_names",
                        fmt::format("has {} names, shape has {} dimensions", metadata.dimension_names.size(),
                                    metadata.shape.size()));
}

}  // namespace zarrdirect
