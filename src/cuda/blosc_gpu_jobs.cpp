#include "cuda/blosc_gpu_jobs.hpp"

namespace zarrdirect::cuda {

namespace portable = codec::portable;

portable::DecodeStatus append_blosc_jobs(const portable::BloscFrame& frame, std::span<const std::uint8_t> bytes,
                                         std::uint64_t src_offset, std::uint64_t dst_offset,
                                         std::uint64_t& scratch_end, BloscGpuJobs& jobs) {
  if (bytes.size() < frame.cbytes) return portable::DecodeStatus::truncated;
  const std::size_t first_stream = jobs.streams.size();
  const std::size_t first_unshuffle = jobs.unshuffles.size();
  if (frame.memcpyed()) {
    // One copy job per block, so that a big memcpyed chunk is still many warps' work.
    for (std::uint32_t b = 0; b < frame.nblocks; ++b) {
      GpuBloscStreamJob job;
      job.src_offset = src_offset + portable::blosc_detail::kHeaderSize + std::uint64_t{b} * frame.blocksize;
      job.dst_offset = dst_offset + std::uint64_t{b} * frame.blocksize;
      job.src_size = job.dst_size = frame.block_size(b);
      jobs.streams.push_back(job);
    }
    return portable::DecodeStatus::ok;
  }
  const bool shuffled = frame.byte_shuffled() || frame.bit_shuffled();
  const std::uint64_t scratch_per_block = (std::uint64_t{frame.scratch_size()} + 15) / 16 * 16;
  std::uint64_t scratch_at = scratch_end;
  for (std::uint32_t b = 0; b < frame.nblocks; ++b) {
    portable::BloscStream streams[portable::blosc_detail::kMaxSplits];
    std::uint32_t count = 0;
    const portable::DecodeStatus status = portable::blosc_block_streams(frame, bytes.data(), b, streams, count);
    if (status != portable::DecodeStatus::ok) {
      jobs.streams.resize(first_stream);
      jobs.unshuffles.resize(first_unshuffle);
      return status;
    }
    const std::uint64_t block_dst = dst_offset + std::uint64_t{b} * frame.blocksize;
    const std::uint64_t target = shuffled ? scratch_at : block_dst;
    for (std::uint32_t s = 0; s < count; ++s) {
      GpuBloscStreamJob job;
      job.src_offset = src_offset + streams[s].offset;
      job.dst_offset = target + streams[s].out_offset;
      job.src_size = streams[s].stored;
      job.dst_size = streams[s].size;
      job.to_scratch = shuffled ? 1 : 0;
      jobs.streams.push_back(job);
    }
    if (shuffled) {
      GpuUnshuffleJob job;
      job.scratch_offset = scratch_at;
      job.dst_offset = block_dst;
      job.size = frame.block_size(b);
      job.typesize = frame.typesize;
      job.bit_shuffle = frame.bit_shuffled() ? 1 : 0;
      jobs.unshuffles.push_back(job);
      scratch_at += scratch_per_block;
    }
  }
  scratch_end = scratch_at;
  return portable::DecodeStatus::ok;
}

void run_blosc_jobs_on_host(const BloscGpuJobs& jobs, const std::uint8_t* src, std::uint8_t* dst,
                            std::uint8_t* scratch, std::vector<portable::DecodeStatus>& statuses) {
  statuses.assign(jobs.streams.size(), portable::DecodeStatus::ok);
  for (std::size_t i = 0; i < jobs.streams.size(); ++i) {
    const GpuBloscStreamJob& job = jobs.streams[i];
    std::uint8_t* out = (job.to_scratch ? scratch : dst) + job.dst_offset;
    if (job.raw()) {
      for (std::uint32_t k = 0; k < job.dst_size; ++k) out[k] = src[job.src_offset + k];
    } else {
      statuses[i] = portable::lz4_decode_block_exact(src + job.src_offset, job.src_size, out, job.dst_size);
    }
  }
  for (const GpuUnshuffleJob& job : jobs.unshuffles) {
    if (job.bit_shuffle)
      portable::blosc_bit_unshuffle(scratch + job.scratch_offset, dst + job.dst_offset, job.size, job.typesize);
    else
      portable::blosc_byte_unshuffle(scratch + job.scratch_offset, dst + job.dst_offset, job.size, job.typesize);
  }
}

}  // namespace zarrdirect::cuda
