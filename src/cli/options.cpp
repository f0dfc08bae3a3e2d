#include "cli/options.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"

namespace zarrdirect::cli {

DeviceSpec parse_device(const std::string& text) {
  DeviceSpec device;
  try {
    device = zarrdirect::parse_device(text);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_argument) throw;
    throw UsageError(fmt::format("--{}", e.what()));  // "--device \"tpu\": expected cpu, cuda or cuda:N ..."
  }
  if (device.kind == Device::cpu) return device;
  // Said before any work, in the words of the command line (the library's message is for
  // every caller); the machine, not the command, is what lacks: exit 1, not a usage error.
  if (!cuda_available())
    throw Error(ErrorKind::cuda, fmt::format("--device {}: no usable CUDA device (`zarrdirect info --system` says why): "
                                             "use --device cpu to read into host memory",
                                             to_string(device)));
  try {
    check_device(device);  // an ordinal this machine lacks: "cuda:3: this machine has 1 CUDA device ..."
  } catch (const Error& e) {
    throw e.with_context("--device");
  }
  return device;
}

Settings settings_from(unsigned threads, const std::string& io_path, bool o_direct, const std::string& decode) {
  Settings settings = Settings::from_environment();
  if (!decode.empty()) settings.decode = parse_decode_side(decode);
  if (threads) settings.threads = threads;
  if (!io_path.empty()) settings.io_path = parse_io_path(io_path);
  if (o_direct) settings.o_direct = true;
  return settings;
}

Region parse_region_option(const std::string& text, const std::vector<std::uint64_t>& shape) {
  try {
    return parse_region(text, shape);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_argument) throw;
    throw UsageError(fmt::format("--{} (the array's shape is [{}])", e.what(), fmt::join(shape, ", ")));
  }
}

Selection parse_selection_option(const std::string& text, const std::vector<std::uint64_t>& shape) {
  try {
    Selection selection = parse_selection(text, shape);
    for (std::size_t d = 0; d < selection.size(); ++d) {
      if (selection[d].kind() != AxisSelection::Kind::index) continue;
      // Already checked against the extent; a file on disk keeps the axis, with extent 1.
      const auto at = static_cast<std::int64_t>(selection[d].resolve(shape[d], d).front());
      selection[d] = AxisSelection::slice(at, at + 1);
    }
    return selection;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_argument) throw;
    throw UsageError(fmt::format("--region: {} (the array's shape is [{}])", e.what(), fmt::join(shape, ", ")));
  }
}

void check_output_option(const std::string& output) {
  struct stat info {};
  if (::stat(output.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) return;
  std::string extension = std::filesystem::path(output).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension != ".npy")
    throw UsageError(fmt::format("--output {}: only NumPy .npy files are written: give a name ending in .npy", output));
}

std::uint64_t region_nbytes(const Region& region, const DataType& dtype) {
  std::uint64_t bytes = dtype.size;
  for (const auto& range : region) {
    const std::uint64_t extent = range.size();
    bytes = extent == 0 || bytes <= UINT64_MAX / extent ? bytes * extent : UINT64_MAX;
  }
  return bytes;
}

}  // namespace zarrdirect::cli
