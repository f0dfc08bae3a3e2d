#include "cuda/gds_sink.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "cuda/copy_plan.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {

DeviceSinkOptions waiting(DeviceSinkOptions options) {
  options.host_waits_for_caller = true;
  return options;
}

// One cuFile read is capped like the host path's (Linux cuts single reads near 2 GiB).
constexpr std::size_t kMaxRead = std::size_t{1} << 30;

// A cuFile handle for one open chunk file; registration can fail (status() says why).
class RegisteredFile {
 public:
  RegisteredFile(const CuFile& cufile, const StoreFile& file) : cufile_(cufile) {
    // cuFileHandleRegister refuses descriptors with O_NONBLOCK (the store opens chunk files with
    // it so that a FIFO planted in the store cannot hang a read), O_APPEND or O_NOATIME:
    // CU_FILE_INVALID_FILE_OPEN_FLAG. For a regular file, which the store has checked it is,
    // they change nothing about reading, and this descriptor is the chunk's own: clear them.
    const int flags = ::fcntl(file.fd(), F_GETFL);
    constexpr int kRefused = O_NONBLOCK | O_APPEND | O_NOATIME;
    if (flags >= 0 && (flags & kRefused) != 0 && ::fcntl(file.fd(), F_SETFL, flags & ~kRefused) != 0)
      throw Error(ErrorKind::io, fmt::format("{}: cannot clear O_NONBLOCK for cuFile: {}", file.path(),
                                             std::strerror(errno)));
    CuFileDescr descr;
    descr.type = kCuFileHandleTypeOpaqueFd;
    descr.handle.fd = file.fd();
    status_ = cufile_.handle_register(&handle_, &descr);
  }
  ~RegisteredFile() {
    if (registered()) cufile_.handle_deregister(handle_);
  }
  RegisteredFile(const RegisteredFile&) = delete;
  RegisteredFile& operator=(const RegisteredFile&) = delete;
  bool registered() const { return status_.err == kCuFileSuccess; }
  const CuFileError& status() const { return status_; }
  CuFileHandle handle() const { return handle_; }

 private:
  const CuFile& cufile_;
  CuFileHandle handle_ = nullptr;
  CuFileError status_{};
};

}  // namespace

GdsSink::GdsSink(const DestinationLayout& destination, std::span<const std::byte> fill_value,
                 DeviceSinkOptions options, const CuFile& cufile, bool register_buffers, bool fall_back)
    : staged_(destination, fill_value, waiting(options)), cufile_(cufile), register_buffers_(register_buffers),
      fall_back_(fall_back) {}

void GdsSink::read_exact(void* handle, const StoreFile& file, std::byte* base, std::size_t nbytes,
                         std::uint64_t offset) const {
  std::size_t done = 0;
  while (done < nbytes) {
    const std::size_t want = std::min(nbytes - done, kMaxRead);
    errno = 0;
    const ssize_t got = cufile_.read(handle, base, want, static_cast<off_t>(offset + done), static_cast<off_t>(done));
    if (got == -1)
      throw Error(ErrorKind::io, fmt::format("{}: cuFileRead of {} bytes at offset {} failed: {}", file.path(), want,
                                             offset + done, std::strerror(errno)));
    if (got < 0)
      throw Error(ErrorKind::io, fmt::format("{}: cuFileRead of {} bytes at offset {} failed: {}", file.path(), want,
                                             offset + done, cufile_error_name(static_cast<int>(-got))));
    if (got == 0)
      throw Error(ErrorKind::corrupt_data, fmt::format("{}: expected {} bytes at offset {}, the file ends after {}",
                                                       file.path(), nbytes, offset, offset + done));
    done += static_cast<std::size_t>(got);
  }
}

bool GdsSink::read_file_direct(unsigned worker, const StoreFile& file, const ChunkBox& box) {
  if (box.num_elements() == 0) return true;
  const DestinationLayout& destination = staged_.destination();
  use_device(staged_.device());
  // Only the bytes from the box's first element to its last are read.
  const ChunkRange range = chunk_range(box, destination.element_size);
  if (range.first_byte + range.nbytes > file.size())
    throw Error(ErrorKind::corrupt_data, fmt::format("{}: file is {} bytes, the box needs {}", file.path(),
                                                     file.size(), range.first_byte + range.nbytes));
  std::byte* dst = destination.address_of(box.offset_in_dest);
  if (refused_.load(std::memory_order_relaxed)) return false;  // staged, like the rest of this read
  RegisteredFile registered(cufile_, file);
  if (!registered.registered()) {
    // cuFile takes some files and not others (a file system GDS does not support; on the GPU
    // machine, every file: its driver opens in compatibility mode, then refuses each handle).
    // The automatic path stages this read's chunks from here on; a forced gds read fails.
    if (fall_back_) {
      refused_ = true;
      return false;
    }
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: GPUDirect Storage refused the file: cuFileHandleRegister failed: {} ({})", file.path(),
                            cufile_error_name(registered.status().err), cufile_.state().detail));
  }
  if (plan_box_copy(box, destination, 0, 0).contiguous) {
    read_exact(registered.handle(), file, dst, range.nbytes, range.first_byte);
    return true;
  }
  StagingSlot& slot = staged_.idle_slot(worker);
  if (register_buffers_ && !slot.gds_registered) {
    // Registration lets native GDS DMA into the scratch without its own bounce buffers; failing
    // to register costs speed, not correctness, so a failure is not an error.
    slot.gds_registered = cufile_.buf_register(slot.device_scratch, slot.capacity, 0).err == kCuFileSuccess;
  }
  read_exact(registered.handle(), file, slot.device_scratch, range.nbytes, range.first_byte);
  staged_.scatter_from_device(worker, slot, slot.device_scratch, box);
  return true;
}

}  // namespace zarrdirect::cuda
