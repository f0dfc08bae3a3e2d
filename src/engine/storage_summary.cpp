// Array::storage_summary: what is stored of the chunk grid, found as the reader would find it.
//
// The keys come from the folder's listing (stored_chunks.hpp). Each chunk key is then opened as a
// read opens it, so links out of the folder and FIFOs are refused rather than counted.
#include <cstdint>
#include <vector>

#include "engine/stored_chunks.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

class ChunkCounter {
 public:
  ChunkCounter(const Store& store, const ArrayMetadata& metadata)
      : store_(store), metadata_(metadata), encoding_(metadata.chunk_key_encoding), grid_(metadata.chunk_grid_shape()) {}

  StorageSummary count() {
    // Saturating, though parsing keeps the element count (so the chunk count) below 2^63.
    summary_.chunks_total = 1;
    for (auto extent : grid_)
      summary_.chunks_total = extent == 0 || summary_.chunks_total <= UINT64_MAX / extent
                                  ? summary_.chunks_total * extent
                                  : UINT64_MAX;
    for_each_listed_chunk(store_, metadata_, [this](const std::vector<std::uint64_t>& coords) { add(coords); });
    return summary_;
  }

 private:
  void add(const std::vector<std::uint64_t>& coords) {
    try {
      auto file = store_.open_object(encoding_.key(coords));
      if (!file) return;  // listed, then removed: missing
      ++summary_.chunks_stored;
      summary_.bytes_stored += file->size();
    } catch (const Error&) {
      ++summary_.chunks_refused;  // a read of this chunk fails with the same error
    }
  }

  const Store& store_;
  const ArrayMetadata& metadata_;
  const ChunkKeyEncoding& encoding_;
  std::vector<std::uint64_t> grid_;
  StorageSummary summary_;
};

}  // namespace

StorageSummary Array::storage_summary() const {
  auto store = open_store(path());
  return ChunkCounter(*store, metadata()).count();
}

}  // namespace zarrdirect
