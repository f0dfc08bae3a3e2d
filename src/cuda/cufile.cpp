#include "cuda/cufile.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace zarrdirect::cuda {
namespace {

// Names of the CUfileOpError values (cufile.h), for messages.
std::string_view op_error_name(int err) {
  switch (err) {
    case 0: return "CU_FILE_SUCCESS";
    case 5001: return "CU_FILE_DRIVER_NOT_INITIALIZED";
    case 5002: return "CU_FILE_DRIVER_INVALID_PROPS";
    case 5003: return "CU_FILE_DRIVER_UNSUPPORTED_LIMIT";
    case 5004: return "CU_FILE_DRIVER_VERSION_MISMATCH";
    case 5005: return "CU_FILE_DRIVER_VERSION_READ_ERROR";
    case 5006: return "CU_FILE_DRIVER_CLOSING";
    case 5007: return "CU_FILE_PLATFORM_NOT_SUPPORTED";
    case 5008: return "CU_FILE_IO_NOT_SUPPORTED";
    case 5009: return "CU_FILE_DEVICE_NOT_SUPPORTED";
    case 5010: return "CU_FILE_NVFS_DRIVER_ERROR";
    case 5011: return "CU_FILE_CUDA_DRIVER_ERROR";
    case 5012: return "CU_FILE_CUDA_POINTER_INVALID";
    case 5013: return "CU_FILE_CUDA_MEMORY_TYPE_INVALID";
    case 5014: return "CU_FILE_CUDA_POINTER_RANGE_ERROR";
    case 5015: return "CU_FILE_CUDA_CONTEXT_MISMATCH";
    case 5016: return "CU_FILE_INVALID_MAPPING_SIZE";
    case 5017: return "CU_FILE_INVALID_MAPPING_RANGE";
    case 5018: return "CU_FILE_INVALID_FILE_TYPE";
    case 5019: return "CU_FILE_INVALID_FILE_OPEN_FLAG";
    case 5020: return "CU_FILE_DIO_NOT_SET";
    case 5022: return "CU_FILE_INVALID_VALUE";
    case 5023: return "CU_FILE_MEMORY_ALREADY_REGISTERED";
    case 5024: return "CU_FILE_MEMORY_NOT_REGISTERED";
    case 5025: return "CU_FILE_PERMISSION_DENIED";
    case 5026: return "CU_FILE_DRIVER_ALREADY_OPEN";
    case 5027: return "CU_FILE_HANDLE_NOT_REGISTERED";
    case 5028: return "CU_FILE_HANDLE_ALREADY_REGISTERED";
    case 5029: return "CU_FILE_DEVICE_NOT_FOUND";
    case 5030: return "CU_FILE_INTERNAL_ERROR";
    case 5031: return "CU_FILE_GETNEWFD_FAILED";
    case 5033: return "CU_FILE_NVFS_SETUP_ERROR";
    case 5034: return "CU_FILE_IO_DISABLED";
    case 5035: return "CU_FILE_BATCH_SUBMIT_FAILED";
    case 5036: return "CU_FILE_GPU_MEMORY_PINNING_FAILED";
    default: return "unknown cuFile error";
  }
}

// Where libcufile may be: the loader's search path first (the soname, then the development
// link), then the toolkit folders, which the loader does not always search.
std::vector<std::string> library_candidates() {
  std::vector<std::string> names = {"libcufile.so.0", "libcufile.so"};
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(variable); root && *root) names.push_back(std::string(root) + "/lib64/libcufile.so.0");
  names.push_back("/usr/local/cuda/lib64/libcufile.so.0");
#if defined(__aarch64__)
  names.push_back("/usr/local/cuda/targets/sbsa-linux/lib/libcufile.so.0");
#else
  names.push_back("/usr/local/cuda/targets/x86_64-linux/lib/libcufile.so.0");
#endif
  return names;
}

template <typename Fn>
Fn symbol(void* library, const char* name) {
  // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
  return reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::string cufile_error_name(int err) {
  const int code = err < 0 ? -err : err;
  return fmt::format("{} ({})", op_error_name(code), code);
}

bool nvidia_fs_loaded() {
  std::error_code ec;
  return std::filesystem::exists("/proc/driver/nvidia-fs/version", ec);
}

CuFile& CuFile::instance() {
  // Never destroyed: its functions may be called while other static objects are destroyed, and
  // the cuFile library tears itself down at exit.
  static CuFile* cufile = new CuFile();
  return *cufile;
}

CuFile::CuFile() {
  std::string errors;
  for (const auto& name : library_candidates()) {
    // RTLD_GLOBAL: libcufile's own dependencies must resolve against one copy of its symbols;
    // loaded RTLD_LOCAL into a fresh Python process, cuFileDriverOpen aborted (free(): invalid
    // pointer) on the GPU machine, while the same load made global worked.
    library_ = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (library_) {
      state_.library = name;
      break;
    }
    if (const char* why = dlerror(); why && errors.empty()) errors = why;
  }
  if (!library_) {
    state_.detail = fmt::format("libcufile not found ({}): GPUDirect Storage is unavailable",
                                errors.empty() ? "no candidate could be loaded" : errors);
    return;
  }
  driver_open_ = symbol<DriverOpenFn>(library_, "cuFileDriverOpen");
  handle_register_ = symbol<HandleRegisterFn>(library_, "cuFileHandleRegister");
  handle_deregister_ = symbol<HandleDeregisterFn>(library_, "cuFileHandleDeregister");
  read_ = symbol<ReadFn>(library_, "cuFileRead");
  buf_register_ = symbol<BufRegisterFn>(library_, "cuFileBufRegister");
  buf_deregister_ = symbol<BufDeregisterFn>(library_, "cuFileBufDeregister");
  if (!driver_open_ || !handle_register_ || !handle_deregister_ || !read_ || !buf_register_ || !buf_deregister_) {
    state_.detail = fmt::format("{} lacks cuFile entry points zarrdirect needs: GPUDirect Storage is unavailable",
                                state_.library);
    return;
  }
  state_.loaded = true;
  state_.native = nvidia_fs_loaded();
  state_.detail = fmt::format("{} loaded; driver not opened yet", state_.library);
}

CuFileState CuFile::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

CuFileState CuFile::open_driver() {
  std::lock_guard lock(mutex_);
  if (!state_.loaded || open_attempted_) return state_;
  open_attempted_ = true;
  state_.driver_tried = true;
  // The driver stays open for the life of the process: closing it while another thread (or
  // another library in the process) still reads would break that reader.
  CuFileError status = driver_open_();
  if (status.err != kCuFileSuccess) {
    state_.detail = fmt::format("cuFileDriverOpen failed: {}", cufile_error_name(status.err));
    if (status.err == 5011) state_.detail += fmt::format(", CUDA driver error {}", status.cu_err);
    if (!state_.native)
      state_.detail += "; nvidia-fs is not loaded, so cuFile needs compatibility mode (allow_compat_mode in cufile.json)";
    return state_;
  }
  state_.driver_open = true;
  state_.detail = state_.native
                      ? "cuFile driver open and nvidia-fs loaded: reads go from storage to GPU memory directly"
                      : "cuFile driver open in compatibility mode (no nvidia-fs kernel module): cuFile reads "
                        "bounce through host memory inside libcufile";
  return state_;
}

}  // namespace zarrdirect::cuda
