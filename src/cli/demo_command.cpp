// `zarrdirect demo`: the quick start's main job. Writes the built-in sample if needed, reads it
// into the GPU when there is one (host memory otherwise), says which, and checks every value.
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/printable.hpp"
#include "cli/replace_folder.hpp"
#include "cli/sample.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect::cli {

Run add_demo_command(CLI::App& app) {
  struct Options {
    std::string path = "build/sample.zarr";
    std::string codec = "zstd";
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand("demo", "Read the built-in sample into the GPU (or host memory) and check it");
  sub->add_option("path", options->path, "Where the sample lives (written if absent)");
  sub->add_option("--codec", options->codec, "Codec of a newly written sample")
      ->check(CLI::IsMember({"none", "zstd", "gzip", "blosc", "sharded"}));
  return [options]() {
    const std::vector<std::uint64_t> shape{128, 256, 256}, chunks{64, 64, 64};
    // Reuse the sample only when this version's generator wrote it; rewrite an older one
    // (removed completely first), and never touch anything that is not a sample.
    const Occupant occupant = inspect_path(options->path);
    bool write = occupant.kind == Occupant::Kind::nothing || occupant.kind == Occupant::Kind::empty_folder;
    if (!write) {
      const auto not_the_sample = [&](const std::string& what) {
        return Error(ErrorKind::invalid_argument,
                     fmt::format("{} holds {}, not zarrdirect's sample: give the demo another path",
                                 printable_line(options->path), what));
      };
      if (occupant.kind != Occupant::Kind::zarr_node) throw not_the_sample(occupant.description);
      std::optional<Array> existing;
      try {
        existing = Array::open(options->path);
      } catch (const Error&) {
        throw not_the_sample(occupant.description);
      }
      const auto& attributes = existing->metadata().attributes;
      const auto description = attributes.find("description");
      if (description == attributes.end() || *description != kSampleDescription) throw not_the_sample("an array");
      const auto version = attributes.find("zarrdirect_sample_version");
      write = version == attributes.end() || *version != kSampleVersion;
      if (write) prepare_new_array(options->path, /*overwrite=*/true);
    }
    if (write) {
      write_sample(options->path, shape, chunks, options->codec);
      fmt::print("wrote the sample to {}\n", printable_line(options->path));
    }
    Array array = Array::open(options->path);
    Device device = cuda_available() ? Device::cuda : Device::cpu;
    auto start = std::chrono::steady_clock::now();
    NDArray result = array.read({}, device);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} [{}] {} ({} codecs) into {} in {:.1f} ms ({:.2f} GB/s)\n", printable_line(options->path),
               fmt::join(result.shape(), ", "), result.dtype().name(), array.metadata().codecs.size(),
               device == Device::cuda ? "GPU memory (CUDA device found)" : "host memory (no CUDA device found)",
               seconds * 1e3, static_cast<double>(result.nbytes()) / seconds / 1e9);
    const auto& m = array.metadata();
    auto expected = sample_volume(m.shape[0], m.shape[1], m.shape[2]);
    auto got = copy_to_host(result);
    if (got.size() != expected.size() * 2 || std::memcmp(got.data(), expected.data(), got.size()) != 0) {
      fmt::print(stderr, "error: the values read differ from the sample written\n");
      return 1;
    }
    fmt::print("verified: all {} values match the sample\n", expected.size());
    return 0;
  };
}

}  // namespace zarrdirect::cli
