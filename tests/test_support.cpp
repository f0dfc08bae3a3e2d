#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

namespace zarrdirect::test {

TempDir::TempDir() {
  std::random_device device;
  path_ = std::filesystem::temp_directory_path() / ("zarrdirect-test-" + std::to_string(::getpid()) + "-" + std::to_string(device()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path conformance_dir() {
  if (const char* dir = std::getenv("ZARRDIRECT_CONFORMANCE_DIR"); dir && *dir) return dir;
  return ZARRDIRECT_CONFORMANCE_DIR;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe)) result.output += buffer.data();
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string cli_path() { return ZARRDIRECT_CLI_PATH; }

ChunkBox make_box(const std::vector<std::uint64_t>& chunk_shape, const std::vector<std::uint64_t>& offset_in_chunk,
                  const std::vector<std::uint64_t>& extent, const std::vector<std::uint64_t>& offset_in_dest) {
  ChunkBox box;
  box.rank = chunk_shape.size();
  for (std::size_t d = 0; d < box.rank; ++d) {
    box.chunk_shape[d] = chunk_shape[d];
    box.offset_in_chunk[d] = offset_in_chunk[d];
    box.extent[d] = extent[d];
    box.offset_in_dest[d] = offset_in_dest[d];
  }
  return box;
}

}  // namespace zarrdirect::test
