#include <fmt/format.h>

#include "util/checked_math.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {

std::uint64_t ArrayMetadata::num_elements() const {
  auto n = checked_product(shape);
  if (!n) throw Error(ErrorKind::invalid_metadata, "shape: element count overflows 64 bits");
  return *n;
}

std::vector<std::uint64_t> ArrayMetadata::chunk_grid_shape() const {
  std::vector<std::uint64_t> grid;
  for (std::size_t d = 0; d < shape.size(); ++d) grid.push_back(ceil_div(shape[d], chunk_shape[d]));
  return grid;
}

std::uint64_t ArrayMetadata::num_chunks() const {
  auto n = checked_product(chunk_grid_shape());
  if (!n) throw Error(ErrorKind::invalid_metadata, "chunk grid: chunk count overflows 64 bits");
  return *n;
}

std::uint64_t ArrayMetadata::chunk_nbytes() const {
  auto n = checked_product(chunk_shape);
  auto bytes = n ? checked_mul(*n, dtype.size) : std::nullopt;
  if (!bytes) throw Error(ErrorKind::invalid_metadata, "chunk shape: chunk size overflows 64 bits");
  return *bytes;
}

}  // namespace zarrdirect
