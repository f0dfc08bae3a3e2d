// Array::resize: a new shape for an existing array, as zarr-python's Array.resize, without the
// stale data zarr-python leaves behind.
//
// zarr-python changes the shape and erases the chunks wholly outside it; the parts of kept edge
// chunks beyond the new shape keep their old values, which reappear when the array grows again.
// Here those parts are rewritten with the fill value, so that every element a resize brings into
// the array reads as the fill value, as after a create. The order keeps each step safe to stop
// after: the kept edge chunks' outer parts are filled and the chunks outside are erased while the
// old shape is stored (elements the user asked to drop), then the metadata is saved with the new
// shape, then growth past an old edge inside its edge chunks is filled in.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/array_state.hpp"
#include "engine/stored_chunks.hpp"
#include "metadata/metadata_file.hpp"

namespace zarrdirect {
namespace {

using Coords = std::vector<std::uint64_t>;

std::string shape_text(const std::vector<std::uint64_t>& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

// The box of chunk `coords` clipped to `extent`, with axis `axis` narrowed to [from, to).
Region chunk_region(const ArrayMetadata& metadata, const Coords& coords, const std::vector<std::uint64_t>& extent,
                    std::size_t axis, std::uint64_t from, std::uint64_t to) {
  Region region(coords.size());
  for (std::size_t d = 0; d < coords.size(); ++d) {
    const std::uint64_t start = coords[d] * metadata.chunk_shape[d];
    const std::uint64_t stop = std::min(extent[d], start + metadata.chunk_shape[d]);
    region[d] = d == axis ? Range{std::max(start, from), std::min(stop, to)} : Range{start, stop};
  }
  return region;
}

bool empty(const Region& region) {
  return std::any_of(region.begin(), region.end(), [](const Range& r) { return r.start >= r.stop; });
}

// Writes the fill value over `region` of `array`.
void fill_region(const Array& array, const Region& region, const WriteSettings& options, const Settings& settings) {
  const auto& fill = array.metadata().fill_value;
  std::uint64_t count = 1;
  for (const Range& r : region) count *= r.stop - r.start;  // at most one chunk's elements
  std::vector<std::byte> elements(count * fill.size());
  for (std::uint64_t i = 0; i < count; ++i) std::copy(fill.begin(), fill.end(), elements.begin() + i * fill.size());
  Source source;
  source.data = elements.data();
  array.write(region, source, options, settings);
}

}  // namespace

void Array::resize(const std::vector<std::uint64_t>& shape, const WriteSettings& options, const Settings& settings) {
  const ArrayMetadata old = impl_->metadata;
  const std::string where = impl_->path.string();
  if (shape.size() != old.shape.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: cannot resize to {}: the array has {} dimensions, the shape {}",
                                                         where, shape_text(shape), old.shape.size(), shape.size()));
  const FileStore& store = impl_->file_store();  // a URL is refused here, naming it
  const std::string key = old.zarr_format == 3 ? "zarr.json" : ".zarray";
  const std::string file = (store.root() / key).string();

  // The new metadata, parsed (extents, overflow, chunk grid) before anything changes.
  auto document = read_metadata_document(store, key);
  if (!document) throw Error(ErrorKind::io, fmt::format("{}: missing", file));
  (*document)["shape"] = shape;
  ArrayMetadata resized = old.zarr_format == 3 ? parse_v3_array_metadata(*document, file)
                                               : parse_v2_array_metadata(*document, old.attributes, file);
  if (shape == old.shape) return;

  const std::vector<std::uint64_t> new_grid = resized.chunk_grid_shape();
  std::vector<Coords> outside, kept;
  for_each_listed_chunk(store, old, [&](const Coords& coords) {
    bool out = false;
    for (std::size_t d = 0; d < coords.size(); ++d) out = out || coords[d] >= new_grid[d];
    (out ? outside : kept).push_back(coords);
  });
  // Shrinking: what kept chunks hold past the new shape becomes the fill value.
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= old.shape[d]) continue;
    for (const Coords& coords : kept) {
      const Region region = chunk_region(old, coords, old.shape, d, shape[d], old.shape[d]);
      if (!empty(region)) fill_region(*this, region, options, settings);
    }
  }
  for (const Coords& coords : outside) store.erase(old.chunk_key_encoding.key(coords), options.durable);

  // The new shape, saved as attributes are: under the metadata file's lock, every other member
  // of the document as stored now.
  {
    KeyLock lock = store.lock(key, options.durable);
    auto current = read_metadata_document(store, key);
    if (!current || !current->is_object()) throw Error(ErrorKind::io, fmt::format("{}: missing", file));
    (*current)["shape"] = shape;
    // As attributes are saved: NaN and Infinity attributes (zarr-python's) kept as tokens.
    const std::string text = readable_json_document(*current, file, non_finite_tokens_for(key));
    lock.commit(std::as_bytes(std::span(text)), options.durable);
  }
  impl_ = Impl::create(impl_->path, std::move(resized));

  // Growing past an edge that cut a chunk: the elements of that chunk between the old edge and the
  // new shape hold whatever its writer left there (the format leaves them unspecified).
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= old.shape[d]) continue;
    for (const Coords& coords : kept) {
      const Region region = chunk_region(metadata(), coords, shape, d, old.shape[d], shape[d]);
      if (!empty(region)) fill_region(*this, region, options, settings);
    }
  }
}

}  // namespace zarrdirect
