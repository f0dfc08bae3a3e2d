// `zarrdirect read PATH`: one read, timed; with --output the result as a .npy file, written
// beside the target and renamed over it only when complete (zarrdirect::write_npy).
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/open_target.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/npy.hpp"

namespace zarrdirect::cli {
namespace {

struct ReadOptions {
  std::string path;
  std::string region;
  std::string device = "cpu";
  std::string output;
  unsigned threads = 0;
  std::string io_path;
  std::string decode;
  bool o_direct = false;
  bool quiet = false;
  std::optional<std::size_t> level;
};

}  // namespace

Run add_read_command(CLI::App& app) {
  auto options = std::make_shared<ReadOptions>();
  auto* sub = app.add_subcommand("read", "Read an array or a region into host or GPU memory");
  sub->add_option("path", options->path, "Array folder, or an OME-Zarr group with --level")->required();
  sub->add_option("--region", options->region,
                  "NumPy-style selection as in Python: start:stop:step per axis (steps may be negative), "
                  "an index, '...'; e.g. 0:10,:,5 or ...,0:8 or ::2,5,::-3 (an index keeps its axis, extent 1; "
                  "only chunks holding a selected element are read)");
  sub->add_option("--device", options->device, "cpu, cuda (the current GPU) or cuda:N (GPU N)");
  sub->add_option("--output,-o", options->output, "Write the result as a .npy file");
  sub->add_option("--threads", options->threads, "Reader threads (default: one per core, at least 4)")
      ->check(CLI::Range(1u, 1024u));
  sub->add_option("--io-path", options->io_path, "auto, gds or staged")->check(CLI::IsMember({"auto", "gds", "staged"}));
  sub->add_option("--decode", options->decode,
                  "Where device reads decode compressed chunks: auto (per codec), gpu (blosc-lz4, lz4 and zstd on the "
                  "GPU), cpu, or share (the GPU takes what its batches have room for, the CPU the rest) (default: "
                  "ZARRDIRECT_DECODE, else auto)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu", "share"}));
  sub->add_flag("--o-direct", options->o_direct, "Bypass the page cache");
  sub->add_flag("--quiet,-q", options->quiet, "No progress display");
  sub->add_option("--level", options->level, "Level of an OME-Zarr multiscale group (0: full resolution)")
      ->check(level_number());
  return [options]() {
    // The options are checked before the read, not after a long one.
    if (!options->output.empty()) check_output_option(options->output);
    const DeviceSpec device = parse_device(options->device);
    Array array = open_target(options->path, options->level);
    Selection selection = parse_selection_option(options->region, array.metadata().shape);
    const auto selected = selection_shape(selection, array.metadata().shape);
    std::uint64_t nbytes = array.metadata().dtype.size;
    for (auto extent : selected) nbytes = extent == 0 || nbytes <= UINT64_MAX / extent ? nbytes * extent : UINT64_MAX;
    Settings settings = settings_from(options->threads, options->io_path, options->o_direct, options->decode);
    ProgressBar bar(!options->quiet && isatty(STDERR_FILENO), nbytes);
    settings.progress = bar.callback();
    auto start = std::chrono::steady_clock::now();
    NDArray result = array.read_selection(selection, device, settings);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bar.clear();
    fmt::print(stderr, "read [{}] {} into {} memory ({} path, {} threads): {:.1f} MiB in {:.2f} ms, {:.2f} GB/s\n",
               fmt::join(result.shape(), ", "), result.dtype().name(),
               device.kind == Device::cuda ? fmt::format("GPU (cuda:{})", result.device_ordinal()) : "host",
               result.stats().io_path, result.stats().threads, static_cast<double>(result.nbytes()) / (1 << 20),
               seconds * 1e3, static_cast<double>(result.nbytes()) / seconds / 1e9);
    if (const ReadStats& stats = result.stats(); stats.chunks_decoded_gpu + stats.chunks_decoded_cpu > 0)
      fmt::print(stderr, "decoded {} chunks on the GPU ({:.1f} MiB), {} on the CPU ({:.1f} MiB)\n", stats.chunks_decoded_gpu,
                 static_cast<double>(stats.bytes_decoded_gpu) / (1 << 20), stats.chunks_decoded_cpu,
                 static_cast<double>(stats.bytes_decoded_cpu) / (1 << 20));
    if (!options->output.empty()) {
      std::vector<std::byte> host = copy_to_host(result);
      write_npy(options->output, result.dtype(), result.shape(), host);
    }
    return 0;
  };
}

}  // namespace zarrdirect::cli
