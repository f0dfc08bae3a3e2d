#include "store/uring_file_reads.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

#ifdef ZARRDIRECT_WITH_URING
#include <linux/openat2.h>
#include <liburing.h>
#endif

namespace zarrdirect {
namespace {

std::atomic<int> forced_error{0};
std::mutex probe_mutex;
std::optional<UringSupport> probed;

}  // namespace

void refuse_uring_for_testing(int error) {
  std::lock_guard lock(probe_mutex);
  forced_error = error;
  probed.reset();
}

#ifndef ZARRDIRECT_WITH_URING

const UringSupport& uring_support() {
  static const UringSupport none{false, "built without liburing"};
  return none;
}

struct UringFileReader::Ring {};
UringFileReader::UringFileReader(std::unique_ptr<Ring> ring, unsigned max_files)
    : ring_(std::move(ring)), max_files_(max_files) {}
UringFileReader::~UringFileReader() = default;
std::unique_ptr<UringFileReader> UringFileReader::create(unsigned) { return nullptr; }
void UringFileReader::read_files(int, std::span<UringFileRead>) {
  throw Error(ErrorKind::unsupported, "io_uring: built without liburing");
}

#else

namespace {

// Per file: statx, then open, read and close.
constexpr unsigned kRequestsPerFile = 3;
// One read request at most (larger files, never chunks this path is for, take the ordinary path).
constexpr std::size_t kMaxRead = std::size_t{1} << 30;

// io_uring_queue_init, or the failure a test asked for.
int setup_ring(io_uring& ring, unsigned entries) {
  if (int error = forced_error.load()) return -error;
  return io_uring_queue_init(entries, &ring, 0);
}

// Why a ring of `entries` cannot serve the reader here; empty when it can (the ring is then set up).
std::string prepare(io_uring& ring, unsigned entries, unsigned files) {
  const int status = setup_ring(ring, entries);
  if (status < 0)
    return fmt::format("io_uring_queue_init failed: {} ({})", strerrorname_np(-status), std::strerror(-status));
  std::string why;
  if (io_uring_probe* probe = io_uring_get_probe_ring(&ring)) {
    for (int op : {IORING_OP_STATX, IORING_OP_OPENAT2, IORING_OP_READ, IORING_OP_CLOSE})
      if (!io_uring_opcode_supported(probe, op)) why = fmt::format("the kernel's io_uring lacks operation {}", op);
    io_uring_free_probe(probe);
  } else {
    why = "io_uring cannot be probed for its operations";
  }
  if (why.empty()) {
    const int registered = io_uring_register_files_sparse(&ring, files);
    if (registered < 0)
      why = fmt::format("io_uring_register_files_sparse failed: {} ({})", strerrorname_np(-registered),
                        std::strerror(-registered));
  }
  if (!why.empty()) io_uring_queue_exit(&ring);
  return why;
}

}  // namespace

const UringSupport& uring_support() {
  std::lock_guard lock(probe_mutex);
  if (!probed) {
    io_uring ring{};
    std::string why = prepare(ring, 8, 1);
    if (why.empty()) io_uring_queue_exit(&ring);
    probed = UringSupport{why.empty(), why};
  }
  return *probed;
}

struct UringFileReader::Ring {
  io_uring ring{};
  bool ready = false;  // set up: torn down with the reader
  std::vector<struct statx> stats;
  ~Ring() {
    if (ready) io_uring_queue_exit(&ring);
  }

  // Submits everything queued and hands each of `count` completions to `take(user_data, res)`.
  template <typename Take>
  void run(unsigned count, Take&& take) {
    unsigned submitted = 0;
    while (submitted < count) {
      const int status = io_uring_submit_and_wait(&ring, 1);
      if (status == -EINTR || status == -EAGAIN || status == -EBUSY) continue;
      if (status < 0)
        throw Error(ErrorKind::io, fmt::format("io_uring_submit failed: {}", std::strerror(-status)));
      if (status == 0) throw Error(ErrorKind::io, "io_uring_submit took none of the queued requests");
      submitted += static_cast<unsigned>(status);
    }
    for (unsigned seen = 0; seen < count;) {
      io_uring_cqe* cqe = nullptr;
      const int status = io_uring_wait_cqe(&ring, &cqe);
      if (status == -EINTR) continue;
      if (status < 0)
        throw Error(ErrorKind::io, fmt::format("io_uring_wait_cqe failed: {}", std::strerror(-status)));
      take(io_uring_cqe_get_data64(cqe), cqe->res);
      io_uring_cqe_seen(&ring, cqe);
      ++seen;
    }
  }
};

UringFileReader::UringFileReader(std::unique_ptr<Ring> ring, unsigned max_files)
    : ring_(std::move(ring)), max_files_(max_files) {}

UringFileReader::~UringFileReader() = default;

std::unique_ptr<UringFileReader> UringFileReader::create(unsigned max_files) {
  if (max_files == 0 || !uring_support().usable) return nullptr;
  auto ring = std::make_unique<Ring>();
  if (!prepare(ring->ring, kRequestsPerFile * max_files, max_files).empty()) return nullptr;
  ring->ready = true;
  ring->stats.resize(max_files);
  return std::unique_ptr<UringFileReader>(new UringFileReader(std::move(ring), max_files));
}

void UringFileReader::read_files(int dir_fd, std::span<UringFileRead> files) {
  if (files.size() > max_files_)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("io_uring: {} files in one batch, the ring takes {}", files.size(), max_files_));
  io_uring& ring = ring_->ring;
  const unsigned count = static_cast<unsigned>(files.size());
  // 1. What each file is: a regular file of exactly the expected size is read; anything else
  //    is left to the ordinary path, which never reads what is not a regular file.
  for (unsigned i = 0; i < count; ++i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_statx(sqe, dir_fd, files[i].path, 0, STATX_TYPE | STATX_SIZE, &ring_->stats[i]);
    io_uring_sqe_set_data64(sqe, i);
  }
  std::vector<unsigned> wanted;
  wanted.reserve(count);
  ring_->run(count, [&](std::uint64_t i, int res) {
    UringFileRead& file = files[static_cast<std::size_t>(i)];
    const struct statx& info = ring_->stats[static_cast<std::size_t>(i)];
    if (res == -ENOENT || res == -ENOTDIR) file.outcome = UringFileRead::Outcome::missing;
    else if (res < 0 || !S_ISREG(info.stx_mode) || info.stx_size != file.buffer.size() ||
             file.buffer.size() > kMaxRead)
      file.outcome = UringFileRead::Outcome::retry;
    else wanted.push_back(static_cast<unsigned>(i));
  });
  if (wanted.empty()) return;
  // 2. Open (beneath the folder, as FileStore::open: no "..", no link out), read and close each,
  //    linked: a failed open cancels its read and close; the close runs after any read.
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;  // no O_CLOEXEC: direct descriptors refuse it
  how.resolve = RESOLVE_BENEATH;
  std::vector<int> read_result(count, -ECANCELED);
  std::vector<int> open_result(count, -ECANCELED);
  for (unsigned slot = 0; slot < wanted.size(); ++slot) {
    const unsigned i = wanted[slot];
    io_uring_sqe* open = io_uring_get_sqe(&ring);
    io_uring_prep_openat2_direct(open, dir_fd, files[i].path, &how, slot);
    io_uring_sqe_set_flags(open, IOSQE_IO_LINK);
    io_uring_sqe_set_data64(open, std::uint64_t{i} << 2);
    io_uring_sqe* read = io_uring_get_sqe(&ring);
    io_uring_prep_read(read, static_cast<int>(slot), files[i].buffer.data(), static_cast<unsigned>(files[i].buffer.size()), 0);
    io_uring_sqe_set_flags(read, IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK);
    io_uring_sqe_set_data64(read, (std::uint64_t{i} << 2) | 1);
    io_uring_sqe* close = io_uring_get_sqe(&ring);
    io_uring_prep_close_direct(close, slot);
    io_uring_sqe_set_data64(close, (std::uint64_t{i} << 2) | 2);
  }
  bool slot_left_open = false;
  ring_->run(static_cast<unsigned>(wanted.size()) * kRequestsPerFile, [&](std::uint64_t tag, int res) {
    const std::size_t i = static_cast<std::size_t>(tag >> 2);
    switch (tag & 3) {
      case 0: open_result[i] = res; break;
      case 1: read_result[i] = res; break;
      default:
        if (res < 0 && res != -ECANCELED) slot_left_open = true;
    }
  });
  for (unsigned i : wanted) {
    if (open_result[i] == -ENOENT || open_result[i] == -ENOTDIR) files[i].outcome = UringFileRead::Outcome::missing;
    else if (open_result[i] >= 0 && read_result[i] == static_cast<int>(files[i].buffer.size()))
      files[i].outcome = UringFileRead::Outcome::read;
    else files[i].outcome = UringFileRead::Outcome::retry;
  }
  if (slot_left_open) {
    // A close failed: start the next batch with an empty table rather than on occupied slots.
    io_uring_unregister_files(&ring);
    if (io_uring_register_files_sparse(&ring, max_files_) < 0)
      throw Error(ErrorKind::io, "io_uring: the file table could not be set up again");
  }
}

#endif

}  // namespace zarrdirect
