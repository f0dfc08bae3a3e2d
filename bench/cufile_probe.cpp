// What cuFile does on this machine, call by call: driver open, handle registration of a file
// opened with and without O_DIRECT, and a read into device memory checked against pread.
// Evidence for docs/BENCHMARKS.md (GPUDirect Storage); not part of the library.
//
//   bench/cufile_probe.sh   (builds this with the toolkit's cufile.h and runs it, logs on)
#include <cuda_runtime.h>
#include <cufile.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cufile_probe FILE\n");
    return 2;
  }
  cudaFree(nullptr);
  CUfileError_t status = cuFileDriverOpen();
  std::printf("cuFileDriverOpen: err %d cu_err %d\n", static_cast<int>(status.err), static_cast<int>(status.cu_err));
  for (int direct = 0; direct < 2; ++direct) {
    int fd = ::open(argv[1], O_RDONLY | (direct ? O_DIRECT : 0));
    if (fd < 0) {
      std::printf("open(%s): %s\n", direct ? "O_DIRECT" : "buffered", std::strerror(errno));
      continue;
    }
    CUfileDescr_t descr{};
    descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    descr.handle.fd = fd;
    CUfileHandle_t handle{};
    status = cuFileHandleRegister(&handle, &descr);
    std::printf("cuFileHandleRegister (%s): err %d cu_err %d\n", direct ? "O_DIRECT" : "buffered",
                static_cast<int>(status.err), static_cast<int>(status.cu_err));
    if (status.err == CU_FILE_SUCCESS) {
      const size_t n = 1 << 20;
      void* device = nullptr;
      cudaMalloc(&device, n);
      ssize_t got = cuFileRead(handle, device, n, 0, 0);
      std::vector<char> from_gpu(n), from_disk(n);
      cudaMemcpy(from_gpu.data(), device, n, cudaMemcpyDeviceToHost);
      int plain = ::open(argv[1], O_RDONLY);
      ssize_t want = ::pread(plain, from_disk.data(), n, 0);
      ::close(plain);
      std::printf("cuFileRead: %zd bytes (pread %zd), equal: %d\n", got, want,
                  got == want && got > 0 && std::memcmp(from_gpu.data(), from_disk.data(), static_cast<size_t>(got)) == 0);
      cuFileHandleDeregister(handle);
      cudaFree(device);
    }
    ::close(fd);
  }
  cuFileDriverClose();
  return 0;
}
