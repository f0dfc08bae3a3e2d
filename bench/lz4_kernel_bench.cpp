// Kernel-level timing of the GPU LZ4 / blosc decoders (issue 18): the first kernels (one thread per
// lz4 chunk or blosc block, lz4_decode_kernels.cuh) against the warp-per-block ones
// (lz4_warp_kernels.cuh + blosc_unshuffle_kernels.cuh), on the same batch in device memory, timed
// with CUDA events around the launches alone (no transfers, no placement). Decoded GB/s = decoded
// bytes / kernel time. Every run's statuses are checked and the decoded bytes compared with the
// input, so a fast wrong kernel does not pass.
//
// Data: the CLI sample's signal (uint16, smooth plus 5 bits of noise), cut into chunks of edge^3
// along z; `distinct` chunks are compressed and repeated to fill the batch.
//
//   lz4_kernel_bench [--chunks N] [--edge E] [--batch B] [--repeat R] [--old-repeat R] [--skip-old]
//                    [--kinds lz4,blosc,blosc-bit,blosc-64]
//   lz4        numcodecs lz4 (one LZ4 block per chunk), edge^3 chunks
//   blosc      blosc lz4 clevel 5, byte shuffle, typesize 2 (numcodecs' Blosc default), edge^3
//   blosc-bit  the same with bit shuffle
//   blosc-64   blosc lz4 byte shuffle in 64^3 chunks (a shard's inner chunks), the same bytes
// --batch B launches B chunks at a time (the read path's batches hold a few chunks each, on
// several streams), one after another; default: the whole set in one launch.
// One command on the GPU machine (configures and builds build-dev when needed):
//   bench/lz4_kernel_bench.sh [options]
#include <cuda_runtime_api.h>

#include <blosc.h>
#include <lz4.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <type_traits>
#include <string>
#include <vector>

#include "cli/sample.hpp"
#include "codec/portable/blosc_frame.hpp"
#include "cuda/blosc_gpu_jobs.hpp"
#include "cuda/blosc_unshuffle_kernels.cuh"
#include "cuda/lz4_decode_kernels.cuh"
#include "cuda/lz4_warp_kernels.cuh"
#include "kernel_timing.hpp"

namespace {

namespace portable = zarrdirect::codec::portable;
namespace zc = zarrdirect::cuda;
using Bytes = std::vector<std::uint8_t>;
using namespace kernel_timing;

struct Options {
  std::uint64_t chunks = 512;
  std::uint64_t edge = 128;
  std::uint64_t batch = 0;  // 0: all chunks in one launch
  int repeat = 5;
  int old_repeat = 1;
  bool skip_old = false;
  std::uint64_t distinct = 16;
  std::vector<std::string> kinds{"lz4", "blosc", "blosc-bit", "blosc-64"};
};

// `distinct` chunks of edge^3 uint16 from the sample's signal, as bytes.
std::vector<Bytes> sample_chunks(std::uint64_t edge, std::uint64_t distinct) {
  const std::vector<std::uint16_t> volume = zarrdirect::cli::sample_volume(edge * distinct, edge, edge);
  const std::size_t chunk_bytes = edge * edge * edge * 2;
  std::vector<Bytes> chunks(distinct, Bytes(chunk_bytes));
  for (std::uint64_t c = 0; c < distinct; ++c)
    std::memcpy(chunks[c].data(), reinterpret_cast<const std::uint8_t*>(volume.data()) + c * chunk_bytes, chunk_bytes);
  return chunks;
}

Bytes lz4_block(const Bytes& data) {
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(data.size()))));
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(data.data()), reinterpret_cast<char*>(out.data()),
                                     static_cast<int>(data.size()), static_cast<int>(out.size()));
  if (n <= 0) {
    std::fprintf(stderr, "lz4_kernel_bench: LZ4_compress_default failed\n");
    std::exit(1);
  }
  out.resize(static_cast<std::size_t>(n));
  return out;
}

Bytes blosc_frame(const Bytes& data, int shuffle) {
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(5, shuffle, 2, data.size(), data.data(), out.data(), out.size(), "lz4", 0, 1);
  if (n <= 0) {
    std::fprintf(stderr, "lz4_kernel_bench: blosc_compress_ctx failed\n");
    std::exit(1);
  }
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// The batch of one kind on the device, and the checks of its output.
struct Batch {
  std::string kind;
  std::uint64_t chunks = 0;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t stored_bytes = 0;
  std::vector<Bytes> originals;            // distinct decoded chunks; chunk c is originals[c % distinct]
  std::vector<std::uint64_t> src_offsets;  // per chunk
  Bytes src;
};

void report(const Batch& batch, const char* kernel, std::uint64_t jobs, const Timing& t) {
  const double decoded = static_cast<double>(batch.chunks * batch.chunk_bytes);
  std::printf("| %s | %s | %llu | %llu | %.2f | %.3f | %.1f | %.2f |\n", batch.kind.c_str(), kernel,
              static_cast<unsigned long long>(batch.chunks), static_cast<unsigned long long>(jobs),
              decoded / static_cast<double>(batch.stored_bytes), t.median_ms, decoded / (t.median_ms * 1e6),
              decoded / (t.best_ms * 1e6));
  std::fflush(stdout);
}

// Compares the device output with the inputs; exits on the first difference.
void verify(const Batch& batch, const std::uint8_t* device_dst, const char* kernel) {
  const Bytes got = host_copy(device_dst, batch.chunks * batch.chunk_bytes);
  for (std::uint64_t c = 0; c < batch.chunks; ++c) {
    const Bytes& want = batch.originals[c % batch.originals.size()];
    if (std::memcmp(got.data() + c * batch.chunk_bytes, want.data(), batch.chunk_bytes) != 0) {
      std::fprintf(stderr, "lz4_kernel_bench: %s %s: chunk %llu decoded wrong\n", batch.kind.c_str(), kernel,
                   static_cast<unsigned long long>(c));
      std::exit(1);
    }
  }
}

template <typename Status>
void verify_statuses(const Batch& batch, const Status* device_statuses, std::size_t n, const char* kernel) {
  for (const Status& s : host_copy(device_statuses, n)) {
    portable::DecodeStatus status;
    if constexpr (std::is_same_v<Status, portable::DecodeOutcome>) status = s.status;
    else status = s;
    if (status != portable::DecodeStatus::ok) {
      std::fprintf(stderr, "lz4_kernel_bench: %s %s: a job failed: %s\n", batch.kind.c_str(), kernel,
                   portable::describe(status));
      std::exit(1);
    }
  }
}

// Splits [0, count) into launches of `batch` jobs' worth of chunks: job ranges per launch.
std::vector<std::pair<std::uint32_t, std::uint32_t>> launches(const std::vector<std::uint32_t>& first_job_of_chunk,
                                                               std::uint32_t total_jobs, std::uint64_t batch) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  const std::uint64_t chunks = first_job_of_chunk.size();
  const std::uint64_t step = batch == 0 ? chunks : batch;
  for (std::uint64_t c = 0; c < chunks; c += step) {
    const std::uint32_t first = first_job_of_chunk[c];
    const std::uint32_t end = c + step < chunks ? first_job_of_chunk[c + step] : total_jobs;
    out.emplace_back(first, end - first);
  }
  return out;
}

void run_lz4(const Options& options, Batch& batch) {
  std::vector<zc::GpuDecodeJob> jobs;
  std::vector<std::uint32_t> first_job;
  std::vector<Bytes> blocks;
  for (const Bytes& chunk : batch.originals) blocks.push_back(lz4_block(chunk));
  for (std::uint64_t c = 0; c < batch.chunks; ++c) {
    const Bytes& block = blocks[c % blocks.size()];
    zc::GpuDecodeJob job;
    job.src_offset = batch.src.size();
    job.src_size = block.size();
    job.dst_offset = c * batch.chunk_bytes;
    job.dst_capacity = batch.chunk_bytes;
    batch.src.insert(batch.src.end(), block.begin(), block.end());
    batch.src.resize((batch.src.size() + 15) / 16 * 16);
    first_job.push_back(static_cast<std::uint32_t>(jobs.size()));
    jobs.push_back(job);
    batch.stored_bytes += block.size() + 4;  // numcodecs' size header
  }
  std::uint8_t* src = device_copy(batch.src);
  std::uint8_t* dst = device_bytes(batch.chunks * batch.chunk_bytes);
  zc::GpuDecodeJob* device_jobs = device_copy(jobs);
  auto* outcomes = device_copy(std::vector<portable::DecodeOutcome>(jobs.size()));
  const auto groups = launches(first_job, static_cast<std::uint32_t>(jobs.size()), options.batch);
  const auto run = [&](bool warp) {
    for (const auto& [first, count] : groups) {
      const cudaError_t status = warp ? zc::launch_lz4_warp_decode(device_jobs + first, count, src, dst, outcomes + first, nullptr)
                                      : zc::launch_lz4_decode(device_jobs + first, count, src, dst, outcomes + first, nullptr);
      check(status, "launch");
    }
  };
  for (const bool warp : {false, true}) {
    if (!warp && options.skip_old) continue;
    const char* name = warp ? "warp per block" : "thread per block (old)";
    check(cudaMemset(dst, 0, batch.chunks * batch.chunk_bytes), "cudaMemset");
    const Timing t = time_runs(warp ? options.repeat : options.old_repeat, [&] { run(warp); });
    verify_statuses(batch, outcomes, jobs.size(), name);
    verify(batch, dst, name);
    report(batch, name, jobs.size(), t);
  }
  cudaFree(src);
  cudaFree(dst);
  cudaFree(device_jobs);
  cudaFree(outcomes);
}

void run_blosc(const Options& options, Batch& batch, int shuffle) {
  std::vector<Bytes> frames;
  for (const Bytes& chunk : batch.originals) frames.push_back(blosc_frame(chunk, shuffle));
  std::vector<zc::GpuBloscBlockJob> old_jobs;
  zc::BloscGpuJobs jobs;
  std::vector<std::uint32_t> old_first, stream_first, unshuffle_first;
  std::uint64_t old_scratch = 0, scratch_end = 0;
  for (std::uint64_t c = 0; c < batch.chunks; ++c) {
    const Bytes& frame = frames[c % frames.size()];
    portable::BloscFrame plan;
    if (portable::blosc_plan(frame.data(), frame.size(), batch.chunk_bytes, plan) != portable::DecodeStatus::ok) {
      std::fprintf(stderr, "lz4_kernel_bench: blosc_plan refused c-blosc's frame\n");
      std::exit(1);
    }
    const std::uint64_t at = batch.src.size();
    old_first.push_back(static_cast<std::uint32_t>(old_jobs.size()));
    for (std::uint32_t b = 0; b < plan.nblocks; ++b) {
      zc::GpuBloscBlockJob job;
      job.frame = plan;
      job.frame_offset = at;
      job.dst_offset = c * batch.chunk_bytes;
      job.scratch_offset = old_scratch;
      job.block = b;
      old_scratch += (plan.scratch_size() + 15) / 16 * 16;
      old_jobs.push_back(job);
    }
    stream_first.push_back(static_cast<std::uint32_t>(jobs.streams.size()));
    unshuffle_first.push_back(static_cast<std::uint32_t>(jobs.unshuffles.size()));
    if (zc::append_blosc_jobs(plan, frame, at, c * batch.chunk_bytes, scratch_end, jobs) != portable::DecodeStatus::ok) {
      std::fprintf(stderr, "lz4_kernel_bench: append_blosc_jobs refused c-blosc's frame\n");
      std::exit(1);
    }
    batch.src.insert(batch.src.end(), frame.begin(), frame.end());
    batch.src.resize((batch.src.size() + 15) / 16 * 16);
    batch.stored_bytes += frame.size();
  }
  std::uint8_t* src = device_copy(batch.src);
  std::uint8_t* dst = device_bytes(batch.chunks * batch.chunk_bytes);
  std::uint8_t* scratch = device_bytes(std::max(old_scratch, scratch_end) + 16);
  auto* device_old = device_copy(old_jobs);
  auto* device_streams = device_copy(jobs.streams);
  auto* device_unshuffles = device_copy(jobs.unshuffles);
  const std::size_t status_count = std::max(old_jobs.size(), jobs.streams.size());
  auto* statuses = device_copy(std::vector<portable::DecodeStatus>(status_count));
  const auto old_groups = launches(old_first, static_cast<std::uint32_t>(old_jobs.size()), options.batch);
  const auto stream_groups = launches(stream_first, static_cast<std::uint32_t>(jobs.streams.size()), options.batch);
  const auto unshuffle_groups = launches(unshuffle_first, static_cast<std::uint32_t>(jobs.unshuffles.size()), options.batch);

  if (!options.skip_old) {
    const char* name = "thread per block (old)";
    check(cudaMemset(dst, 0, batch.chunks * batch.chunk_bytes), "cudaMemset");
    const Timing t = time_runs(options.old_repeat, [&] {
      for (const auto& [first, count] : old_groups)
        check(zc::launch_blosc_decode(device_old + first, count, src, dst, scratch, statuses + first, nullptr), "launch");
    });
    verify_statuses(batch, statuses, old_jobs.size(), name);
    verify(batch, dst, name);
    report(batch, name, old_jobs.size(), t);
  }
  // The warp kernels: streams, then unshuffles, per launch group (as the read path's batches).
  const auto run_streams = [&] {
    for (const auto& [first, count] : stream_groups)
      check(zc::launch_blosc_stream_decode(device_streams + first, count, src, dst, scratch, statuses + first, nullptr),
            "launch");
  };
  const auto run_unshuffles = [&] {
    for (const auto& [first, count] : unshuffle_groups)
      check(zc::launch_blosc_unshuffle(device_unshuffles + first, count, scratch, dst, nullptr), "launch");
  };
  check(cudaMemset(dst, 0, batch.chunks * batch.chunk_bytes), "cudaMemset");
  const char* name = "warp per stream + unshuffle";
  const Timing both = time_runs(options.repeat, [&] {
    if (options.batch == 0) {
      run_streams();
      run_unshuffles();
    } else {
      for (std::size_t g = 0; g < stream_groups.size(); ++g) {
        const auto [sf, sc] = stream_groups[g];
        const auto [uf, uc] = unshuffle_groups[g];
        check(zc::launch_blosc_stream_decode(device_streams + sf, sc, src, dst, scratch, statuses + sf, nullptr), "launch");
        check(zc::launch_blosc_unshuffle(device_unshuffles + uf, uc, scratch, dst, nullptr), "launch");
      }
    }
  });
  verify_statuses(batch, statuses, jobs.streams.size(), name);
  verify(batch, dst, name);
  report(batch, name, jobs.streams.size(), both);
  // Where the time goes: each kernel alone (same output, so no verification is lost).
  report(batch, "  of which stream decode", jobs.streams.size(), time_runs(options.repeat, run_streams));
  if (!jobs.unshuffles.empty())
    report(batch, "  of which unshuffle", jobs.unshuffles.size(), time_runs(options.repeat, run_unshuffles));
  cudaFree(src);
  cudaFree(dst);
  cudaFree(scratch);
  cudaFree(device_old);
  cudaFree(device_streams);
  cudaFree(device_unshuffles);
  cudaFree(statuses);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lz4_kernel_bench: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--chunks") options.chunks = std::stoull(value());
    else if (arg == "--edge") options.edge = std::stoull(value());
    else if (arg == "--batch") options.batch = std::stoull(value());
    else if (arg == "--repeat") options.repeat = std::stoi(value());
    else if (arg == "--old-repeat") options.old_repeat = std::stoi(value());
    else if (arg == "--distinct") options.distinct = std::stoull(value());
    else if (arg == "--skip-old") options.skip_old = true;
    else if (arg == "--kinds") options.kinds = split(value());
    else {
      std::fprintf(stderr, "usage: lz4_kernel_bench [--chunks N] [--edge E] [--batch B] [--repeat R] "
                           "[--old-repeat R] [--distinct D] [--skip-old] [--kinds lz4,blosc,blosc-bit,blosc-64]\n");
      std::exit(2);
    }
  }
  options.repeat = std::max(options.repeat, 1);
  options.old_repeat = std::max(options.old_repeat, 1);
  options.distinct = std::max<std::uint64_t>(1, std::min(options.distinct, options.chunks));
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; %llu chunks of %llu^3 uint16 per kind (%llu distinct), %s, median of %d runs "
              "(old kernel: %d)\n\n",
              prop.name, prop.multiProcessorCount, static_cast<unsigned long long>(options.chunks),
              static_cast<unsigned long long>(options.edge), static_cast<unsigned long long>(options.distinct),
              options.batch == 0 ? "one launch" : ("launches of " + std::to_string(options.batch) + " chunks").c_str(),
              options.repeat, options.old_repeat);
  std::printf("| data | kernel | chunks | jobs | ratio | median ms | decoded GB/s (median) | GB/s (best) |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& kind : options.kinds) {
    Batch batch;
    batch.kind = kind;
    std::uint64_t edge = options.edge;
    std::uint64_t chunks = options.chunks;
    std::uint64_t distinct = options.distinct;
    if (kind == "blosc-64") {  // the same bytes in 64^3 chunks
      const std::uint64_t factor = (options.edge / 64) * (options.edge / 64) * (options.edge / 64);
      edge = 64;
      chunks = options.chunks * std::max<std::uint64_t>(factor, 1);
      distinct = options.distinct * std::max<std::uint64_t>(factor, 1);
    }
    batch.chunks = chunks;
    batch.chunk_bytes = edge * edge * edge * 2;
    batch.originals = sample_chunks(edge, distinct);
    if (kind == "lz4") run_lz4(options, batch);
    else if (kind == "blosc" || kind == "blosc-64") run_blosc(options, batch, BLOSC_SHUFFLE);
    else if (kind == "blosc-bit") run_blosc(options, batch, BLOSC_BITSHUFFLE);
    else std::fprintf(stderr, "lz4_kernel_bench: unknown kind %s (lz4, blosc, blosc-bit, blosc-64)\n", kind.c_str());
  }
  return 0;
}
