#include "engine/array_writer.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "codec/codec.hpp"
#include "util/box_copy.hpp"
#include "util/geometry.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

void write_file(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(ErrorKind::io, fmt::format("{}: write failed", path.string()));
}

}  // namespace

void write_array(const std::filesystem::path& path, const nlohmann::json& metadata_doc, std::span<const std::byte> data,
                 const WriteOptions& options) {
  const bool v3 = metadata_doc.value("zarr_format", 0) == 3;
  const std::string metadata_name = v3 ? "zarr.json" : ".zarray";
  ArrayMetadata metadata = v3 ? parse_v3_array_metadata(metadata_doc, metadata_name)
                              : parse_v2_array_metadata(metadata_doc, nlohmann::json::object(), metadata_name);
  if (data.size() != metadata.num_elements() * metadata.dtype.size)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("write_array: {} bytes given for an array of {} bytes", data.size(),
                            metadata.num_elements() * metadata.dtype.size));
  std::filesystem::create_directories(path);
  std::string text = metadata_doc.dump(2);
  write_file(path / metadata_name, std::as_bytes(std::span(text)));

  codec::ArraySpec spec{metadata.chunk_shape, metadata.dtype, metadata.fill_value};
  auto chain = codec::CodecChain::create(metadata.codecs, spec, metadata_name);
  const std::size_t rank = metadata.rank();
  const std::size_t element = metadata.dtype.size;
  auto grid = metadata.chunk_grid_shape();
  const std::uint64_t chunk_count = metadata.num_chunks();
  // The whole array as a "chunk" to gather from, through the same box copy the reader uses.
  DestinationLayout source_layout = DestinationLayout::contiguous(const_cast<std::byte*>(data.data()), metadata.shape, element);

  auto write_chunk = [&](std::uint64_t linear, std::vector<std::byte>& chunk) {
    const Extents coords = linear_to_coords(linear, to_extents(grid), rank);
    // Edge chunks are stored full size; the part outside the array holds the fill value.
    for (std::size_t i = 0; i < chunk.size(); i += element)
      std::copy(metadata.fill_value.begin(), metadata.fill_value.end(), chunk.begin() + static_cast<std::ptrdiff_t>(i));
    ChunkBox box;
    box.rank = rank;
    for (std::size_t d = 0; d < rank; ++d) {
      std::uint64_t start = coords[d] * metadata.chunk_shape[d];
      box.chunk_shape[d] = metadata.shape[d];
      box.offset_in_chunk[d] = start;
      box.extent[d] = std::min(metadata.chunk_shape[d], metadata.shape[d] - start);
      box.offset_in_dest[d] = 0;
    }
    DestinationLayout chunk_layout = DestinationLayout::contiguous(chunk.data(), metadata.chunk_shape, element);
    copy_box_to_host(source_layout.data, box, chunk_layout);
    if (options.skip_fill_chunks) {
      bool all_fill = true;
      for (std::size_t i = 0; i < chunk.size() && all_fill; i += element)
        all_fill = std::equal(metadata.fill_value.begin(), metadata.fill_value.end(), chunk.begin() + static_cast<std::ptrdiff_t>(i));
      if (all_fill) return;
    }
    auto encoded = chain.encode(chunk);
    write_file(path / metadata.chunk_key_encoding.key(std::span(coords.data(), rank)), encoded);
  };

  // Chunks are independent: encode and write them on all cores.
  std::atomic<std::uint64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    std::vector<std::byte> chunk(static_cast<std::size_t>(metadata.chunk_nbytes()));
    for (std::uint64_t linear = next++; linear < chunk_count; linear = next++) {
      try {
        write_chunk(linear, chunk);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = chunk_count;
      }
    }
  };
  unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 32u));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace zarrdirect
