// OME-Zarr multiscale attributes: the input becomes a group's metadata in a scratch folder (a v2
// group's .zattrs, or a v3 group's zarr.json, chosen by the first byte), then Multiscale::open
// reads it and every level path is resolved. Only zarrdirect::Error may come out, and no level
// may point outside the group.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fuzz_support.hpp"
#include "zarrdirect/group.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path path = base / ("zarrdirect-fuzz-ome-" + std::to_string(::getpid()));
    fs::create_directories(path / "v2");
    fs::create_directories(path / "v3");
    std::ofstream(path / "v2/.zgroup") << R"({"zarr_format": 2})";
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return path;
  }();
  return dir;
}

void write(const fs::path& file, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool v3 = data[0] & 1;
  const fs::path group = scratch() / (v3 ? "v3" : "v2");
  write(group / (v3 ? "zarr.json" : ".zattrs"), data + 1, size - 1);
  try {
    auto image = zarrdirect::Multiscale::open(group);
    (void)image.version();
    (void)image.name();
    for (std::size_t level = 0; level < image.levels().size(); ++level) {
      fs::path path = image.level_path(level).lexically_normal();
      auto relative = path.lexically_relative(group);
      if (relative.empty() || *relative.begin() == "..") zarrdirect::fuzz::violated("a level outside the group");
    }
  } catch (const zarrdirect::Error&) {
  }
  return 0;
}
