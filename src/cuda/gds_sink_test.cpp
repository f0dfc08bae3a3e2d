// The GDS sink decides per file: a chunk cuFile registers is read into GPU memory with cuFile;
// a refused file is staged (automatic path) or an error naming GPUDirect Storage (gds forced).
// On the GPU machine cuFile's driver opens in compatibility mode and refuses every handle, so
// there these tests exercise the refusal; where GDS works they check the values it read.
#include "cuda/gds_sink.hpp"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "cuda/cufile.hpp"
#include "zarrdirect/array.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {

namespace fs = std::filesystem;

// A folder with one 64 KiB chunk file "c" (bytes 0, 1, 2, ... mod 251).
struct ChunkFolder {
  fs::path root = fs::temp_directory_path() / fmt::format("zd_gds_sink_{}", ::getpid());
  std::vector<std::byte> bytes = std::vector<std::byte>(65536);
  ChunkFolder() {
    fs::create_directories(root);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i % 251);
    std::ofstream(root / "c", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                       static_cast<std::streamsize>(bytes.size()));
  }
  ~ChunkFolder() { fs::remove_all(root); }
};

// Opens cuFile's driver; the reason to skip when there is no GPU or no usable cuFile.
std::string cufile_unusable() {
  if (!cuda_available()) return "no CUDA device";
  if (cudaFree(nullptr) != cudaSuccess) return "no CUDA context";
  const CuFileState state = CuFile::instance().open_driver();
  if (!state.driver_open) return state.detail;
  return {};
}

// Reads the chunk through a GdsSink (`fall_back` as the automatic path sets it) into device
// memory; returns whether cuFile read it, and the bytes that landed.
struct Outcome {
  bool read_by_cufile = false;
  std::string sink_name;
  std::vector<std::byte> landed;
};

Outcome read_through_sink(const ChunkFolder& folder, bool fall_back) {
  const std::uint64_t shape[1] = {folder.bytes.size()};
  void* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, folder.bytes.size()), cudaSuccess);
  EXPECT_EQ(cudaMemset(device, 0, folder.bytes.size()), cudaSuccess);
  auto layout = DestinationLayout::contiguous(static_cast<std::byte*>(device), shape, 1);
  const std::byte fill[1] = {std::byte{0}};
  DeviceSinkOptions options;
  GdsSink sink(layout, fill, options, CuFile::instance(), false, fall_back);
  Outcome outcome;
  try {
    sink.start(1, folder.bytes.size());
    FileStore store(folder.root);
    auto file = store.open("c");
    EXPECT_TRUE(file.has_value());
    ChunkBox box;
    box.rank = 1;
    box.chunk_shape[0] = box.extent[0] = folder.bytes.size();
    outcome.read_by_cufile = sink.read_file_direct(0, *file, box);
    sink.finish();
  } catch (...) {
    cudaFree(device);
    throw;
  }
  outcome.sink_name = std::string(sink.name());
  outcome.landed.resize(folder.bytes.size());
  EXPECT_EQ(cudaMemcpy(outcome.landed.data(), device, outcome.landed.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(device);
  return outcome;
}

TEST(GdsSink, AutomaticPathReadsWithCuFileOrHandsTheFileBack) {
  if (auto why = cufile_unusable(); !why.empty()) GTEST_SKIP() << why;
  ChunkFolder folder;
  Outcome outcome = read_through_sink(folder, true);
  if (outcome.read_by_cufile) {
    EXPECT_EQ(outcome.sink_name, "gds");
    EXPECT_EQ(std::memcmp(outcome.landed.data(), folder.bytes.data(), folder.bytes.size()), 0);
  } else {
    // Refused: nothing was written, and the read reports that it went on staged.
    EXPECT_EQ(outcome.sink_name, "gds, then staged (cuFile refused a file)");
    EXPECT_TRUE(std::all_of(outcome.landed.begin(), outcome.landed.end(), [](std::byte b) { return b == std::byte{0}; }));
    std::printf("cuFile refused the file; the automatic path stages it\n");
  }
}

TEST(GdsSink, ForcedGdsReadsWithCuFileOrNamesTheRefusal) {
  if (auto why = cufile_unusable(); !why.empty()) GTEST_SKIP() << why;
  ChunkFolder folder;
  try {
    Outcome outcome = read_through_sink(folder, false);
    EXPECT_TRUE(outcome.read_by_cufile);
    EXPECT_EQ(std::memcmp(outcome.landed.data(), folder.bytes.data(), folder.bytes.size()), 0);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find("GPUDirect Storage"), std::string::npos) << message;
    EXPECT_NE(message.find("cuFileHandleRegister"), std::string::npos) << message;
    EXPECT_NE(message.find((folder.root / "c").string()), std::string::npos) << message;
    std::printf("forced gds: %s\n", message.c_str());
  }
}

}  // namespace
}  // namespace zarrdirect::cuda
