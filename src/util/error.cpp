#include "zarrdirect/error.hpp"

#include "util/quote.hpp"

namespace zarrdirect {
namespace {

// Call sites quote what they take from metadata; this is the backstop that keeps every message,
// however it was built, to one line a terminal shows as text (the CLI prints it after "error: ").
constexpr std::size_t kMaxMessageBytes = 16u << 10;

std::string one_line(const std::string& message) {
  if (message.size() <= kMaxMessageBytes && is_printable(message)) return message;
  return printable(message, kMaxMessageBytes);
}

}  // namespace

Error::Error(ErrorKind kind, const std::string& message) : std::runtime_error(one_line(message)), kind_(kind) {}

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_metadata: return "invalid metadata";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::corrupt_data: return "corrupt data";
    case ErrorKind::io: return "I/O error";
    case ErrorKind::cuda: return "CUDA error";
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::cancelled: return "cancelled";
  }
  return "error";
}

Error Error::with_context(std::string_view context) const {
  return Error(kind_, std::string(context) + ": " + what());
}

}  // namespace zarrdirect
