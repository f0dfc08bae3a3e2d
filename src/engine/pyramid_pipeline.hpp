// The pyramid's data path: slabs of level 0 along the slowest halved axis go in; each is written
// to level 0, downsampled into level 1, written, and so on down. Rows of a level that do not fill
// a whole storage unit (chunk, or shard) of that level wait in a buffer for the next slab, so no
// chunk is written twice and no write has to merge.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "zarrdirect/array.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect {

class PyramidPipeline {
 public:
  struct Config {
    std::vector<Array> levels;        // created, empty; level k has level k-1's shape halved
    DataType dtype;
    Device device = Device::cpu;
    unsigned halved_dims = 2;
    DownsampleMethod method = DownsampleMethod::mean;
    WriteSettings write;
    Settings settings;                // for the writes (its progress is not used)
    void* cuda_stream = nullptr;
    unsigned threads = 1;             // host downsampling workers
    std::uint64_t max_slab_rows = 0;  // the most rows one push brings
    std::function<void()> after_level;  // called after each level of each slab
  };
  explicit PyramidPipeline(Config config);

  // The next `rows` rows of level 0 along the slowest halved axis: C-contiguous memory of the
  // level-0 shape with that axis `rows` long, on the configured device. Every slab but the last
  // holds a multiple of 2^(levels-1) rows and of level 0's storage unit. The last slab writes out
  // everything still waiting.
  void push(const void* slab, std::uint64_t rows, bool last);

  std::uint64_t bytes_written() const { return bytes_written_; }
  std::size_t chunks_merged() const { return chunks_merged_; }
  std::size_t peak_buffer_bytes() const { return peak_bytes_; }
  // Adds memory the caller holds for the pipeline (the slab buffer) to the count.
  void count_buffer(std::size_t bytes);

 private:
  struct Level {
    std::vector<std::uint64_t> shape;
    std::uint64_t plane_bytes = 0;  // bytes of one row (one index of the slab axis) per outer index
    std::uint64_t unit = 1;         // rows of one storage unit along the slab axis
    std::uint64_t written = 0;      // rows written so far
    Buffer part;                    // this slab's rows of the level (levels 1 and below)
    Buffer pending;                 // rows waiting for a whole unit
    std::uint64_t pending_rows = 0;
  };
  Buffer allocate(std::size_t bytes);
  void emit(std::size_t k, const std::byte* data, std::uint64_t rows, bool last);
  void write_rows(std::size_t k, const std::byte* data, std::uint64_t buffer_rows, std::uint64_t first,
                  std::uint64_t count);
  void copy_rows(std::size_t k, std::byte* dst, std::uint64_t dst_rows, const std::byte* src, std::uint64_t src_rows,
                 std::uint64_t count);

  Config config_;
  std::size_t axis_ = 0;        // the slab axis
  std::uint64_t outer_ = 1;     // product of the axes before it
  std::vector<Level> levels_;
  std::uint64_t bytes_written_ = 0;
  std::size_t chunks_merged_ = 0;
  std::size_t live_bytes_ = 0;
  std::size_t peak_bytes_ = 0;
};

}  // namespace zarrdirect
