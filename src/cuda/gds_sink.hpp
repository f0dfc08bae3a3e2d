// The sink for the "gds" I/O path: uncompressed, unsharded chunk files are read with cuFile
// straight into GPU memory (the destination itself when the chunk lands there in one run, else
// the worker's device scratch followed by the scatter kernel). Everything else the reader
// stages (compressed chunks, fills) goes through an owned DeviceSink, which also owns the
// streams, slots and ordering.
#pragma once

#include <atomic>

#include "cuda/cufile.hpp"
#include "cuda/device_sink.hpp"

namespace zarrdirect::cuda {

class GdsSink final : public ChunkSink {
 public:
  // `cufile` must have its driver open. The options' host_waits_for_caller is forced on. With
  // `fall_back` (the automatic path), a file cuFile refuses to register is staged instead, and so
  // is every chunk after it; without it (gds forced), the refusal is an error.
  GdsSink(const DestinationLayout& destination, std::span<const std::byte> fill_value, DeviceSinkOptions options,
          const CuFile& cufile, bool register_buffers, bool fall_back);

  std::string_view name() const override { return refused_ ? "gds, then staged (cuFile refused a file)" : "gds"; }
  void start(unsigned workers, std::size_t max_chunk_bytes) override { staged_.start(workers, max_chunk_bytes); }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override { return staged_.staging(worker, nbytes); }
  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override {
    staged_.place(worker, chunk, box);
  }
  void fill(unsigned worker, const ChunkBox& box) override { staged_.fill(worker, box); }
  bool read_file_direct(unsigned worker, const StoreFile& file, const ChunkBox& box) override;
  void finish() override { staged_.finish(); }
  CudaCallStats cuda_calls() const { return staged_.cuda_calls(); }  // ReadStats::cuda_calls
  std::size_t pinned_allocations() const { return staged_.pinned_allocations(); }

 private:
  // Reads [offset, offset + nbytes) of the file to device memory `base`, looping over short reads.
  void read_exact(void* handle, const StoreFile& file, std::byte* base, std::size_t nbytes, std::uint64_t offset) const;

  DeviceSink staged_;
  const CuFile& cufile_;
  bool register_buffers_;
  bool fall_back_;
  std::atomic<bool> refused_{false};
};

}  // namespace zarrdirect::cuda
