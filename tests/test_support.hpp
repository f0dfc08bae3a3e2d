// Helpers shared by the tests: temporary folders, the conformance corpus, small arrays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/layout.hpp"

namespace zarrdirect::test {

// A fresh folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The conformance corpus (ZARRDIRECT_CONFORMANCE_DIR in the environment, else tests/data/conformance).
std::filesystem::path conformance_dir();

void write_text(const std::filesystem::path& path, const std::string& text);
void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);

// Runs a command, returning its exit status and combined output.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
CommandResult run_command(const std::string& command);

// Path of the built zarrdirect CLI.
std::string cli_path();

// The box where a chunk of `chunk_shape` meets a read: `extent` elements from `offset_in_chunk`,
// landing at `offset_in_dest`.
ChunkBox make_box(const std::vector<std::uint64_t>& chunk_shape, const std::vector<std::uint64_t>& offset_in_chunk,
                  const std::vector<std::uint64_t>& extent, const std::vector<std::uint64_t>& offset_in_dest);

}  // namespace zarrdirect::test
