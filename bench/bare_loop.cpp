// The bound the GPU benchmark measures zarrdirect against: the simplest loop that moves whole
// chunk files to the GPU. N threads each take files from a shared list, open and pread each one
// whole into their own pinned buffer, and issue an async host-to-device copy of it into one
// device buffer (each file to its own offset, no placement). Two pinned buffers per thread let a
// read overlap the previous copy.
//
//   bare_loop [--threads N] [--repeat R] [--cold] [--part K/N] [--sync] [--host] FOLDER
//
// --host: the host-memory bound instead, with no CUDA at all: each file is pread whole into the
// thread's own buffer and copied (memcpy) into one host buffer, each to its own offset.
//
// --part K/N: only the K-th of N consecutive shares (by bytes) of the files, sorted by path: one
// GPU's slab when N processes share the array (bench/multi_gpu.py). --sync: print "ready" once
// set up, then run once per line read from stdin (until end of input), so that the processes of
// a multi-GPU run start each run together; each run's line then carries wall-clock start and end
// (seconds since the epoch) for the aggregate.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <iostream>

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fmt::print(stderr, "bare_loop: {}: {}\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

struct ChunkFile {
  std::string path;
  std::size_t size;
  std::size_t device_offset;
};

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = 16, repeat = 3;
  bool cold = false, sync_runs = false, host = false;
  unsigned part = 0, parts = 1;
  std::string folder;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) threads = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (arg == "--repeat" && i + 1 < argc) repeat = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (arg == "--cold") cold = true;
    else if (arg == "--sync") sync_runs = true;
    else if (arg == "--host") host = true;
    else if (arg == "--part" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%u/%u", &part, &parts) != 2 || parts == 0 || part >= parts) {
        fmt::print(stderr, "bare_loop: --part takes K/N with K < N\n");
        return 2;
      }
    }
    else folder = arg;
  }
  if (folder.empty()) {
    fmt::print(stderr, "usage: bare_loop [--threads N] [--repeat R] [--cold] [--part K/N] [--sync] [--host] FOLDER\n");
    return 2;
  }
  std::vector<ChunkFile> all;
  std::size_t everything = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    auto name = entry.path().filename().string();
    if (name == "zarr.json" || name.starts_with(".z")) continue;
    all.push_back({entry.path().string(), static_cast<std::size_t>(entry.file_size()), 0});
    everything += all.back().size;
  }
  std::sort(all.begin(), all.end(), [](const ChunkFile& a, const ChunkFile& b) { return a.path < b.path; });
  // This part's files: those whose first byte (counting through the sorted list) falls in its share.
  std::vector<ChunkFile> files;
  std::size_t total = 0, largest = 0, before = 0;
  const double share = static_cast<double>(everything) / parts;
  for (auto& file : all) {
    const auto owner = std::min<std::size_t>(parts - 1, static_cast<std::size_t>(static_cast<double>(before) / share));
    before += file.size;
    if (owner != part) continue;
    file.device_offset = total;
    files.push_back(file);
    total += file.size;
    largest = std::max(largest, file.size);
  }
  void* device = nullptr;
  // --host: the destination and the threads' buffers in ordinary memory, touched once before the
  // runs (as zarrdirect's bench reuses its destination).
  std::vector<char> host_destination;
  std::vector<std::vector<char>> host_buffers;
  if (host) {
    host_destination.assign(std::max<std::size_t>(total, 1), 0);
    host_buffers.assign(threads, std::vector<char>(std::max<std::size_t>(largest, 1), 0));
    device = host_destination.data();
  } else {
    check(cudaMalloc(&device, std::max<std::size_t>(total, 1)), "cudaMalloc");
  }
  struct Worker {
    cudaStream_t stream;
    void* pinned[2];
    cudaEvent_t done[2];
  };
  std::vector<Worker> workers(host ? 0 : threads);
  for (auto& w : workers) {
    check(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking), "stream");
    for (int s = 0; s < 2; ++s) {
      check(cudaHostAlloc(&w.pinned[s], std::max<std::size_t>(largest, 1), cudaHostAllocDefault), "cudaHostAlloc");
      check(cudaEventCreateWithFlags(&w.done[s], cudaEventDisableTiming), "event");
    }
  }
  if (sync_runs) {
    fmt::print("ready\n");
    std::fflush(stdout);
  }
  std::string go;
  for (unsigned run = 0; sync_runs ? static_cast<bool>(std::getline(std::cin, go)) : run < repeat; ++run) {
    if (cold) {
      ::sync();
      std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
    }
    std::atomic<std::size_t> next{0};
    const double wall_start = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        if (host) {
          char* buffer = host_buffers[t].data();
          for (std::size_t i = next++; i < files.size(); i = next++) {
            int fd = ::open(files[i].path.c_str(), O_RDONLY);
            if (fd < 0) std::exit(1);
            std::size_t done = 0;
            while (done < files[i].size) {
              ssize_t got = ::pread(fd, buffer + done, files[i].size - done, static_cast<off_t>(done));
              if (got <= 0) std::exit(1);
              done += static_cast<std::size_t>(got);
            }
            ::close(fd);
            std::memcpy(static_cast<char*>(device) + files[i].device_offset, buffer, files[i].size);
          }
          return;
        }
        Worker& w = workers[t];
        check(cudaSetDevice(0), "cudaSetDevice");
        unsigned slot = 0;
        for (std::size_t i = next++; i < files.size(); i = next++) {
          check(cudaEventSynchronize(w.done[slot]), "event sync");
          int fd = ::open(files[i].path.c_str(), O_RDONLY);
          if (fd < 0) std::exit(1);
          std::size_t done = 0;
          while (done < files[i].size) {
            ssize_t got = ::pread(fd, static_cast<char*>(w.pinned[slot]) + done, files[i].size - done, static_cast<off_t>(done));
            if (got <= 0) std::exit(1);
            done += static_cast<std::size_t>(got);
          }
          ::close(fd);
          check(cudaMemcpyAsync(static_cast<char*>(device) + files[i].device_offset, w.pinned[slot], files[i].size,
                                cudaMemcpyHostToDevice, w.stream), "copy");
          check(cudaEventRecord(w.done[slot], w.stream), "record");
          slot ^= 1u;
        }
        check(cudaStreamSynchronize(w.stream), "stream sync");
      });
    for (auto& thread : pool) thread.join();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{{\"tool\": \"bare_loop\", \"memory\": \"{}\", \"run\": {}, \"files\": {}, \"bytes\": {}, \"seconds\": {:.6f}, \"gbps\": {:.3f}, "
               "\"start\": {:.6f}, \"end\": {:.6f}}}\n",
               host ? "host" : "device", run + 1, files.size(), total, seconds, static_cast<double>(total) / seconds / 1e9, wall_start,
               wall_start + seconds);
    std::fflush(stdout);
  }
  return 0;
}
