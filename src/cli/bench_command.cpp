// `zarrdirect bench PATH`: repeated reads, throughput per run. --cold evicts the array's files
// from the page cache before each run (posix_fadvise DONTNEED, which needs no privileges; as
// root it also drops the whole cache).
//
// By default the destination is allocated once, before the first run, and every run reads into
// it, as a loader feeding a training loop does and as the bare-loop bound in bench/ does; with
// --fresh-output each run allocates its result, and the allocation is part of the time.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/open_target.hpp"
#include "cli/options.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect::cli {

namespace {

void evict_from_page_cache(const std::filesystem::path& root) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  if (::geteuid() == 0) {
    ::sync();
    std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
  }
}

// The last run's CUDA calls by kind (device reads; zeros for host reads).
nlohmann::json cuda_calls_json(const CudaCallStats& calls) {
  return {{"copies", calls.copies},           {"memsets", calls.memsets},
          {"kernel_launches", calls.kernel_launches}, {"event_records", calls.event_records},
          {"stream_waits", calls.stream_waits}, {"synchronizations", calls.synchronizations},
          {"total", calls.total()}};
}

}  // namespace

Run add_bench_command(CLI::App& app) {
  struct Options {
    std::string path;
    std::string region;
    std::string device = "cpu";
    unsigned repeat = 5;
    bool cold = false;
    unsigned threads = 0;
    std::string io_path;
    std::string decode;
    bool o_direct = false;
    bool json = false;
    bool fresh_output = false;
    std::optional<std::size_t> level;
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand("bench", "Time repeated reads of an array");
  sub->add_option("path", options->path, "Array folder")->required();
  sub->add_option("--region", options->region, "NumPy-style region");
  sub->add_option("--device", options->device, "cpu, cuda (the current GPU) or cuda:N (GPU N)");
  sub->add_option("--repeat", options->repeat, "Runs (default 5)")->check(CLI::Range(1u, 1000u));
  sub->add_flag("--cold", options->cold, "Evict the array from the page cache before each run");
  sub->add_option("--threads", options->threads, "Reader threads")->check(CLI::Range(1u, 1024u));
  sub->add_option("--io-path", options->io_path, "auto, gds or staged")->check(CLI::IsMember({"auto", "gds", "staged"}));
  sub->add_option("--decode", options->decode,
                  "Where device reads decode compressed chunks: auto (per codec), gpu (blosc-lz4, lz4 and zstd on the "
                  "GPU), cpu, or share (the GPU takes what its batches have room for, the CPU the rest) (default: "
                  "ZARRDIRECT_DECODE, else auto)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu", "share"}));
  sub->add_flag("--o-direct", options->o_direct, "Bypass the page cache");
  sub->add_flag("--json", options->json, "One JSON line with every run");
  sub->add_flag("--fresh-output", options->fresh_output, "Allocate a new result in each run, and time it");
  sub->add_option("--level", options->level, "Level of an OME-Zarr multiscale group")
      ->check(level_number());
  return [options]() {
    Array array = open_target(options->path, options->level);
    Region region = parse_region_option(options->region, array.metadata().shape);
    Settings settings = settings_from(options->threads, options->io_path, options->o_direct, options->decode);
    const DeviceSpec device = parse_device(options->device);
    const std::uint64_t nbytes = region_nbytes(region, array.metadata().dtype);
    Buffer reused;
    if (!options->fresh_output) reused = Buffer::allocate(device, static_cast<std::size_t>(nbytes));
    std::vector<double> rates;
    ReadStats stats;
    for (unsigned run = 0; run < options->repeat; ++run) {
      if (options->cold) evict_from_page_cache(array.path());
      auto start = std::chrono::steady_clock::now();
      if (options->fresh_output) {
        stats = array.read(region, device, settings).stats();
      } else {
        stats = array.read_into(region,
                                Destination{.data = reused.data(), .byte_strides = {}, .device = device.kind,
                                            .cuda_stream = nullptr, .device_ordinal = reused.device_ordinal()},
                                settings);
      }
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rates.push_back(static_cast<double>(nbytes) / seconds / 1e9);
      if (!options->json)
        fmt::print("run {}: {:.1f} MiB in {:.2f} ms: {:.2f} GB/s ({} path, {} threads, {} chunks, {} missing, "
                   "{} decoded on the GPU, {} on the CPU)\n",
                   run + 1,
                   static_cast<double>(nbytes) / (1 << 20), seconds * 1e3, rates.back(), stats.io_path,
                   stats.threads, stats.chunks_total, stats.chunks_missing, stats.chunks_decoded_gpu,
                   stats.chunks_decoded_cpu);
    }
    std::vector<double> sorted = rates;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted[sorted.size() / 2];
    if (options->json) {
      nlohmann::json doc = {{"path", options->path}, {"device", options->device}, {"cold", options->cold},
                            {"gbps", rates}, {"median_gbps", median}, {"best_gbps", sorted.back()},
                            {"io_path", stats.io_path}, {"io_engine", stats.io_engine}, {"threads", stats.threads}, {"fresh_output", options->fresh_output}, {"bytes_read", stats.bytes_read},
                            {"bytes_out", stats.bytes_out}, {"chunks_total", stats.chunks_total},
                            {"cuda_calls", cuda_calls_json(stats.cuda_calls)}, {"chunks_decoded_gpu", stats.chunks_decoded_gpu},
                            {"chunks_decoded_cpu", stats.chunks_decoded_cpu}, {"bytes_decoded_gpu", stats.bytes_decoded_gpu},
                            {"bytes_decoded_cpu", stats.bytes_decoded_cpu}, {"pinned_allocations", stats.pinned_allocations}};
      fmt::print("{}\n", doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
      fmt::print("median {:.2f} GB/s, best {:.2f} GB/s over {} runs ({})\n", median, sorted.back(), rates.size(),
                 options->cold ? "cold cache" : "warm cache");
    }
    return 0;
  };
}

}  // namespace zarrdirect::cli
