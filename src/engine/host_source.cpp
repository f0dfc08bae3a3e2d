#include "engine/chunk_source.hpp"
#include "util/box_copy.hpp"

namespace zarrdirect {

// The strided walk is the reader's, run backwards (util/box_copy).
void gather_box_from_host(const DestinationLayout& source, const ChunkBox& box, std::byte* chunk) {
  copy_box_from_host(source, box, chunk);
}

void HostSource::gather(unsigned, const ChunkBox& box, std::span<std::byte> chunk) {
  gather_box_from_host(layout_, box, chunk.data());
}

std::span<const std::byte> HostSource::whole_chunk(unsigned, const ChunkBox& box) {
  if (!box.covers_chunk() || !layout_.box_is_contiguous(box)) return {};
  return {layout_.address_of(box.offset_in_dest), static_cast<std::size_t>(box.num_elements()) * layout_.element_size};
}

}  // namespace zarrdirect
