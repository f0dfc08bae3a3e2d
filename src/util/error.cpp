#include "zarrdirect/error.hpp"

namespace zarrdirect {

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
