#include "zarrdirect/settings.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

template <typename T>
void read_number(const char* variable, T& target) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return;
  T value{};
  auto [end, ec] = std::from_chars(text, text + std::char_traits<char>::length(text), value);
  if (ec != std::errc() || *end != '\0')
    throw Error(ErrorKind::invalid_argument, fmt::format("environment variable {}=\"{}\" is not a number", variable, text));
  target = value;
}

// Physical memory in bytes; 0 when the system does not say.
std::size_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  const auto physical = static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page_size);
  return static_cast<std::size_t>(std::min<unsigned long long>(physical, SIZE_MAX));
}

}  // namespace

std::string_view to_string(IoPath path) {
  switch (path) {
    case IoPath::automatic: return "auto";
    case IoPath::gds: return "gds";
    case IoPath::staged: return "staged";
  }
  return "auto";
}

IoPath parse_io_path(std::string_view text) {
  if (text == "auto") return IoPath::automatic;
  if (text == "gds") return IoPath::gds;
  if (text == "staged" || text == "posix") return IoPath::staged;
  throw Error(ErrorKind::invalid_argument, fmt::format("I/O path \"{}\": expected auto, gds or staged", text));
}

std::string_view to_string(IoEngine engine) {
  switch (engine) {
    case IoEngine::automatic: return "auto";
    case IoEngine::uring: return "uring";
    case IoEngine::threads: return "threads";
  }
  return "auto";
}

std::string_view to_string(DecodeSide side) {
  switch (side) {
    case DecodeSide::automatic: return "auto";
    case DecodeSide::gpu: return "gpu";
    case DecodeSide::cpu: return "cpu";
    case DecodeSide::share: return "share";
  }
  return "auto";
}

IoEngine parse_io_engine(std::string_view text) {
  if (text == "auto") return IoEngine::automatic;
  if (text == "uring" || text == "io_uring") return IoEngine::uring;
  if (text == "threads") return IoEngine::threads;
  throw Error(ErrorKind::invalid_argument, fmt::format("I/O engine \"{}\": expected auto, uring or threads", text));
}

DecodeSide parse_decode_side(std::string_view text) {
  if (text == "auto") return DecodeSide::automatic;
  if (text == "gpu") return DecodeSide::gpu;
  if (text == "cpu") return DecodeSide::cpu;
  if (text == "share") return DecodeSide::share;
  throw Error(ErrorKind::invalid_argument, fmt::format("decode side \"{}\": expected auto, gpu, cpu or share", text));
}

Settings Settings::from_environment() {
  Settings settings;
  read_number("ZARRDIRECT_THREADS", settings.threads);
  std::size_t staging_mb = settings.staging_bytes >> 20;
  read_number("ZARRDIRECT_STAGING_MB", staging_mb);
  settings.staging_bytes = staging_mb << 20;
  read_number("ZARRDIRECT_SLOTS_PER_THREAD", settings.slots_per_thread);
  unsigned device_batch = settings.device_batch ? 1 : 0;
  read_number("ZARRDIRECT_DEVICE_BATCH", device_batch);
  settings.device_batch = device_batch != 0;
  unsigned o_direct = settings.o_direct ? 1 : 0;
  read_number("ZARRDIRECT_O_DIRECT", o_direct);
  settings.o_direct = o_direct != 0;
  std::size_t memory_mb = settings.memory_limit_bytes >> 20;
  read_number("ZARRDIRECT_MEMORY_LIMIT_MB", memory_mb);
  if (memory_mb > (SIZE_MAX >> 20))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("environment variable ZARRDIRECT_MEMORY_LIMIT_MB={} is out of range", memory_mb));
  settings.memory_limit_bytes = memory_mb << 20;
  std::size_t pinned_mb = settings.pinned_pool_bytes >> 20;
  read_number("ZARRDIRECT_PINNED_POOL_MB", pinned_mb);
  if (pinned_mb > (SIZE_MAX >> 20))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("environment variable ZARRDIRECT_PINNED_POOL_MB={} is out of range", pinned_mb));
  settings.pinned_pool_bytes = pinned_mb << 20;
  std::size_t cache_mb = 0;
  read_number("ZARRDIRECT_CACHE_MB", cache_mb);
  if (cache_mb > (SIZE_MAX >> 20))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("environment variable ZARRDIRECT_CACHE_MB={} is out of range", cache_mb));
  settings.cache_bytes = cache_mb << 20;
  std::size_t device_cache_mb = 0;
  read_number("ZARRDIRECT_DEVICE_CACHE_MB", device_cache_mb);
  if (device_cache_mb > (SIZE_MAX >> 20))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("environment variable ZARRDIRECT_DEVICE_CACHE_MB={} is out of range", device_cache_mb));
  settings.device_cache_bytes = device_cache_mb << 20;
  if (const char* path = std::getenv("ZARRDIRECT_IO_PATH"); path && *path) settings.io_path = parse_io_path(path);
  if (const char* engine = std::getenv("ZARRDIRECT_IO"); engine && *engine) settings.io_engine = parse_io_engine(engine);
  if (const char* side = std::getenv("ZARRDIRECT_DECODE"); side && *side) {
    try {
      settings.decode = parse_decode_side(side);
    } catch (const Error& e) {
      throw e.with_context("environment variable ZARRDIRECT_DECODE");
    }
  }
  return settings;
}

unsigned Settings::effective_threads() const {
  if (threads > 0) return std::min(threads, kMaxReaderThreads);
  // Reads wait on the disk as much as on the CPU: at least 4 threads even on small machines.
  return std::min(std::max(4u, std::thread::hardware_concurrency()), kMaxReaderThreads);
}

std::size_t Settings::effective_memory_limit() const {
  if (memory_limit_bytes > 0) return memory_limit_bytes;
  constexpr std::size_t kFloor = std::size_t{256} << 20;
  const std::size_t physical = physical_memory();
  if (physical == 0) return kFloor;
  return std::max(kFloor, physical / 2);
}

std::size_t Settings::effective_pinned_pool() const {
  if (pinned_pool_bytes > 0) return pinned_pool_bytes;
  return default_pinned_pool_bytes(physical_memory());
}

std::size_t Settings::default_pinned_pool_bytes(std::size_t physical_bytes) {
  constexpr std::size_t kFloor = std::size_t{256} << 20;  // one read's default staging
  constexpr std::size_t kDefault = std::size_t{4} << 30;
  // Unknown memory (0): the floor. Pinned memory cannot be paged out, so an eighth at most.
  return std::max(kFloor, std::min(kDefault, physical_bytes / 8));
}

}  // namespace zarrdirect
