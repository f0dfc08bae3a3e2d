// cuFile (GPUDirect Storage), loaded at run time.
//
// zarrdirect is built where cufile.h may be missing and runs where libcufile may be missing, so
// it declares the handful of cuFile types and functions it uses itself (layouts as documented by
// NVIDIA's cufile.h) and dlopen()s libcufile.so.0 on first use. Nothing here fails at load time:
// the state says what was found, and GDS reads refuse with that explanation.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace zarrdirect::cuda {

// --- The cuFile ABI subset (cufile.h) ---------------------------------------------------------
struct CuFileError {   // CUfileError_t
  int err = 0;         // CUfileOpError: 0 success, 5001... failures
  int cu_err = 0;      // CUresult, set when err is CU_FILE_CUDA_DRIVER_ERROR (5011)
};
inline constexpr int kCuFileSuccess = 0;
inline constexpr int kCuFileHandleTypeOpaqueFd = 1;  // CU_FILE_HANDLE_TYPE_OPAQUE_FD

struct CuFileDescr {   // CUfileDescr_t
  int type = kCuFileHandleTypeOpaqueFd;
  union {
    int fd;
    void* handle;
  } handle{};
  const void* fs_ops = nullptr;  // const CUfileFSOps_t*: null for ordinary files
};
using CuFileHandle = void*;      // CUfileHandle_t

// "CU_FILE_DRIVER_NOT_INITIALIZED (5001)" for a cuFile status code.
std::string cufile_error_name(int err);

// --- The loaded library -----------------------------------------------------------------------
struct CuFileState {
  bool loaded = false;       // libcufile was found and has every symbol used here
  bool driver_tried = false; // cuFileDriverOpen was called (driver_open says how it went)
  bool driver_open = false;  // cuFileDriverOpen succeeded
  bool native = false;       // nvidia-fs is loaded: reads go storage -> GPU without a host bounce
  std::string library;       // the file dlopen() took, when loaded
  std::string detail;        // one sentence: why not loaded / not open, or which mode
};

class CuFile {
 public:
  // The process-wide instance; the first call dlopen()s the library (not the driver).
  static CuFile& instance();

  // What is known so far, without opening the driver.
  CuFileState state() const;
  // Opens the driver on the first call (later calls return the outcome of the first).
  // Needs a CUDA device current on the calling thread.
  CuFileState open_driver();

  // The entry points; valid only when state().loaded (and driver_open for I/O).
  CuFileError handle_register(CuFileHandle* handle, CuFileDescr* descr) const { return handle_register_(handle, descr); }
  void handle_deregister(CuFileHandle handle) const { handle_deregister_(handle); }
  ssize_t read(CuFileHandle handle, void* device_base, std::size_t size, off_t file_offset, off_t device_offset) const {
    return read_(handle, device_base, size, file_offset, device_offset);
  }
  CuFileError buf_register(const void* device_base, std::size_t length, int flags) const {
    return buf_register_(device_base, length, flags);
  }
  CuFileError buf_deregister(const void* device_base) const { return buf_deregister_(device_base); }

  CuFile(const CuFile&) = delete;
  CuFile& operator=(const CuFile&) = delete;

 private:
  CuFile();

  using DriverOpenFn = CuFileError (*)();
  using HandleRegisterFn = CuFileError (*)(CuFileHandle*, CuFileDescr*);
  using HandleDeregisterFn = void (*)(CuFileHandle);
  using ReadFn = ssize_t (*)(CuFileHandle, void*, std::size_t, off_t, off_t);
  using BufRegisterFn = CuFileError (*)(const void*, std::size_t, int);
  using BufDeregisterFn = CuFileError (*)(const void*);

  mutable std::mutex mutex_;
  CuFileState state_;
  bool open_attempted_ = false;
  void* library_ = nullptr;
  DriverOpenFn driver_open_ = nullptr;
  HandleRegisterFn handle_register_ = nullptr;
  HandleDeregisterFn handle_deregister_ = nullptr;
  ReadFn read_ = nullptr;
  BufRegisterFn buf_register_ = nullptr;
  BufDeregisterFn buf_deregister_ = nullptr;
};

// True when the nvidia-fs kernel module is loaded (/proc/driver/nvidia-fs/version exists): the
// condition for cuFile to move data storage -> GPU directly rather than in compatibility mode.
bool nvidia_fs_loaded();

}  // namespace zarrdirect::cuda
