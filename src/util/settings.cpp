#include "zarrdirect/settings.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <thread>

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

Settings Settings::from_environment() {
  Settings settings;
  read_number("ZARRDIRECT_THREADS", settings.threads);
  std::size_t staging_mb = settings.staging_bytes >> 20;
  read_number("ZARRDIRECT_STAGING_MB", staging_mb);
  settings.staging_bytes = staging_mb << 20;
  read_number("ZARRDIRECT_SLOTS_PER_THREAD", settings.slots_per_thread);
  unsigned o_direct = settings.o_direct ? 1 : 0;
  read_number("ZARRDIRECT_O_DIRECT", o_direct);
  settings.o_direct = o_direct != 0;
  if (const char* path = std::getenv("ZARRDIRECT_IO_PATH"); path && *path) settings.io_path = parse_io_path(path);
  return settings;
}

unsigned Settings::effective_threads() const {
  if (threads > 0) return threads;
  // Reads wait on the disk as much as on the CPU: at least 4 threads even on small machines.
  return std::max(4u, std::thread::hardware_concurrency());
}

}  // namespace zarrdirect
