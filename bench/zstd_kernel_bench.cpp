// Kernel-level timing of the GPU zstd decoder (issue 18): the two steps of the block jobs
// (zstd_decode_kernels.cuh: 1, 8 or 32 lanes a Huffman stream and a thread per block's sequences,
// then a warp or a block of threads per frame), each timed with CUDA events around its launch
// alone (no transfers, no placement), on a batch already in device memory, beside libzstd on the
// host's cores for the same frames.
// Decoded GB/s = decoded bytes / time. Every run's outcomes are checked and the decoded bytes
// compared with the input, so a fast wrong kernel does not pass.
//
// Data: the CLI sample's signal (uint16, smooth plus 5 bits of noise), cut into chunks of edge^3
// along z, zstd level `--level` with the content size in the header (as zarr writes chunks);
// `distinct` chunks are compressed and repeated to fill the batch.
//
//   zstd_kernel_bench [--chunks N] [--edge E] [--level L] [--repeat R] [--threads T]
// One command on the GPU machine: bench/zstd_kernel_bench.sh [options]
#include <cuda_runtime_api.h>

#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/sample.hpp"
#include "cuda/zstd_decode_kernels.cuh"
#include "cuda/zstd_gpu_jobs.hpp"
#include "kernel_timing.hpp"

namespace {

namespace portable = zarrdirect::codec::portable;
namespace zc = zarrdirect::cuda;
using Bytes = std::vector<std::uint8_t>;
using namespace kernel_timing;

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t chunks = 256;
  std::uint64_t edge = 128;
  std::uint64_t distinct = 16;
  int level = 1;
  int repeat = 5;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const std::uint64_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (name == "--chunks") chunks = value;
    else if (name == "--edge") edge = value;
    else if (name == "--level") level = static_cast<int>(value);
    else if (name == "--repeat") repeat = static_cast<int>(value);
    else if (name == "--threads") threads = static_cast<unsigned>(value);
    else if (name == "--distinct") distinct = value;
    else {
      std::fprintf(stderr, "zstd_kernel_bench: unknown option %s\n", name.c_str());
      return 2;
    }
  }
  distinct = std::min(distinct, chunks);
  const std::vector<std::uint16_t> volume = zarrdirect::cli::sample_volume(edge * distinct, edge, edge);
  const std::size_t chunk_bytes = edge * edge * edge * 2;
  std::vector<Bytes> originals(distinct, Bytes(chunk_bytes));
  std::vector<Bytes> frames;
  for (std::uint64_t c = 0; c < distinct; ++c) {
    std::memcpy(originals[c].data(), reinterpret_cast<const std::uint8_t*>(volume.data()) + c * chunk_bytes, chunk_bytes);
    Bytes frame(ZSTD_compressBound(chunk_bytes));
    const std::size_t n = ZSTD_compress(frame.data(), frame.size(), originals[c].data(), chunk_bytes, level);
    if (ZSTD_isError(n)) return 1;
    frame.resize(n);
    frames.push_back(std::move(frame));
  }
  // The batch: chunk c is frame c % distinct, listed as the sink lists it.
  Bytes src;
  zc::ZstdGpuJobs jobs;
  std::uint64_t scratch_bytes = 0;
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const Bytes& frame = frames[c % distinct];
    const std::uint64_t at = src.size();
    src.insert(src.end(), frame.begin(), frame.end());
    src.resize((src.size() + 15) / 16 * 16);
    if (zc::append_zstd_jobs(frame, at, c * chunk_bytes, chunk_bytes, scratch_bytes, jobs) != portable::DecodeStatus::ok) {
      std::fprintf(stderr, "zstd_kernel_bench: the listing refused chunk %llu\n", static_cast<unsigned long long>(c));
      return 1;
    }
  }
  const double decoded = static_cast<double>(chunks * chunk_bytes);
  std::uint8_t* d_src = device_copy(src);
  portable::ZstdBlockJob* d_blocks = device_copy(jobs.blocks);
  portable::ZstdFrameJob* d_frames = device_copy(jobs.frames);
  std::uint8_t* d_dst = device_bytes(chunks * chunk_bytes);
  std::uint8_t* d_scratch = device_bytes(scratch_bytes);
  auto* d_outcomes = reinterpret_cast<portable::DecodeOutcome*>(device_bytes(chunks * sizeof(portable::DecodeOutcome)));
  const auto block_count = static_cast<std::uint32_t>(jobs.blocks.size());
  const auto frame_count = static_cast<std::uint32_t>(jobs.frames.size());
  const double step_one = time_runs(repeat, [&] {
    check(zc::launch_zstd_block_slots(d_blocks, block_count, d_src, d_scratch, nullptr), "step one launch");
  }).median_ms;
  const double literals = time_runs(repeat, [&] {
    check(zc::launch_zstd_literals(d_blocks, block_count, d_src, d_scratch, nullptr, 0), "literals launch");
  }).median_ms;
  const double sequences = time_runs(repeat, [&] {
    check(zc::launch_zstd_sequences(d_blocks, block_count, d_src, d_scratch, nullptr), "sequences launch");
  }).median_ms;
  std::uint64_t literal_bytes = 0;
  std::uint64_t sequence_count = 0;
  std::uint64_t huffman_blocks = 0;
  for (const auto& block : jobs.blocks) {
    literal_bytes += block.literal_size;
    sequence_count += block.sequence_count;
    huffman_blocks += block.literals_type == portable::ZstdLiteralsType::huffman ? 1 : 0;
  }
  const double step_two = time_runs(repeat, [&] {
    check(zc::launch_zstd_execute(d_blocks, d_frames, frame_count, d_src, d_dst, d_scratch, d_outcomes, nullptr, 0),
          "step two launch");
  }).median_ms;
  const double both = time_runs(repeat, [&] {
    check(zc::launch_zstd_decode(d_blocks, block_count, d_frames, frame_count, d_src, d_dst, d_scratch, d_outcomes,
                                 nullptr),
          "decode launch");
  }).median_ms;
  // Whether the last decode left every chunk's outcome ok and its bytes the input's; names the
  // first wrong chunk and `how` it was decoded.
  std::vector<portable::DecodeOutcome> outcomes(chunks);
  Bytes got(chunks * chunk_bytes);
  const auto decoded_right = [&](const std::string& how) {
    check(cudaMemcpy(outcomes.data(), d_outcomes, chunks * sizeof(portable::DecodeOutcome), cudaMemcpyDeviceToHost),
          "outcomes back");
    check(cudaMemcpy(got.data(), d_dst, got.size(), cudaMemcpyDeviceToHost), "output back");
    for (std::uint64_t c = 0; c < chunks; ++c) {
      if (outcomes[c].status != portable::DecodeStatus::ok ||
          std::memcmp(got.data() + c * chunk_bytes, originals[c % distinct].data(), chunk_bytes) != 0) {
        std::fprintf(stderr, "zstd_kernel_bench: chunk %llu decoded wrong%s (%s)\n", static_cast<unsigned long long>(c),
                     how.c_str(), portable::describe(outcomes[c].status));
        return false;
      }
    }
    return true;
  };
  if (!decoded_right("")) return 1;
  // The literals kernel with each number of lanes a Huffman stream, and the whole decode with it
  // (the three launches in a row), each checked against the input.
  struct LanesRow {
    std::uint32_t lanes;
    std::uint32_t team;
    double literals_ms;
    double execute_ms;
    double decode_ms;
  };
  std::vector<LanesRow> lanes_rows;
  for (const auto& [lanes, team] : {std::pair{1u, 32u}, std::pair{8u, 32u}, std::pair{32u, 32u}, std::pair{32u, 256u}}) {
    const double lanes_literals = time_runs(repeat, [&] {
      check(zc::launch_zstd_literals(d_blocks, block_count, d_src, d_scratch, nullptr, lanes), "literals launch");
    }).median_ms;
    const double team_execute = time_runs(repeat, [&] {
      check(zc::launch_zstd_execute(d_blocks, d_frames, frame_count, d_src, d_dst, d_scratch, d_outcomes, nullptr, team),
            "step two launch");
    }).median_ms;
    check(cudaMemset(d_dst, 0, chunks * chunk_bytes), "clear output");
    const double lanes_decode = time_runs(repeat, [&] {
      check(zc::launch_zstd_literals(d_blocks, block_count, d_src, d_scratch, nullptr, lanes), "literals launch");
      check(zc::launch_zstd_sequences(d_blocks, block_count, d_src, d_scratch, nullptr), "sequences launch");
      check(zc::launch_zstd_execute(d_blocks, d_frames, frame_count, d_src, d_dst, d_scratch, d_outcomes, nullptr, team),
            "step two launch");
    }).median_ms;
    if (!decoded_right(" with " + std::to_string(lanes) + " lanes a stream, " + std::to_string(team) +
                       " threads a frame"))
      return 1;
    lanes_rows.push_back({lanes, team, lanes_literals, team_execute, lanes_decode});
  }
  // libzstd on `threads` host threads, chunks shared out, best of `repeat`.
  double cpu_best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        Bytes out(chunk_bytes);
        for (std::uint64_t c = t; c < chunks; c += threads) {
          const Bytes& frame = frames[c % distinct];
          if (ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size()) != chunk_bytes) std::abort();
        }
      });
    }
    for (auto& thread : pool) thread.join();
    cpu_best = std::min(cpu_best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("| edge | chunks | blocks | ratio | step one ms (GB/s) | step two ms (GB/s) | both ms (GB/s) | libzstd %u threads ms (GB/s) |\n",
              threads);
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %llu | %llu | %u | %.2f | %.3f (%.1f) | %.3f (%.1f) | %.3f (%.1f) | %.2f (%.1f) |\n",
              static_cast<unsigned long long>(edge), static_cast<unsigned long long>(chunks), block_count,
              decoded / static_cast<double>(src.size()), step_one, decoded / (step_one * 1e6), step_two,
              decoded / (step_two * 1e6), both, decoded / (both * 1e6), cpu_best, decoded / (cpu_best * 1e6));
  // Step one's two launches alone: where its time goes (literals per Huffman stream thread, or
  // sequences per block thread).
  std::printf("\n| literal bytes | Huffman blocks | sequences | literals kernel ms (MB/s a stream) | sequences kernel ms "
              "(sequences/s a block thread) |\n|---:|---:|---:|---:|---:|\n");
  const double streams = static_cast<double>(std::max<std::uint64_t>(1, huffman_blocks * 4));
  const double blocks = static_cast<double>(std::max<std::uint32_t>(1, block_count));
  std::printf("| %llu | %llu | %llu | %.3f (%.2f) | %.3f (%.0f) |\n", static_cast<unsigned long long>(literal_bytes),
              static_cast<unsigned long long>(huffman_blocks), static_cast<unsigned long long>(sequence_count), literals,
              static_cast<double>(literal_bytes) / streams / (literals * 1e3), sequences,
              static_cast<double>(sequence_count) / blocks / (sequences * 1e-3));
  std::printf("\n| lanes a Huffman stream | threads a frame | literals kernel ms (GB/s of literals) | step two ms | "
              "whole decode ms (decoded GB/s) |\n|---:|---:|---:|---:|---:|\n");
  for (const LanesRow& row : lanes_rows)
    std::printf("| %u | %u%s | %.3f (%.1f) | %.3f | %.3f (%.1f) |\n", row.lanes, row.team,
                row.lanes == zc::literal_lanes() && row.team == zc::frame_team_for(frame_count)
                    ? " (chosen)"
                    : "",
                row.literals_ms, static_cast<double>(literal_bytes) / (row.literals_ms * 1e6), row.execute_ms,
                row.decode_ms, decoded / (row.decode_ms * 1e6));
  return 0;
}
