#include "codec/bounded_output.hpp"

#include <algorithm>
#include <limits>

namespace zarrdirect::codec {
namespace {

// Typical chunks compress by a few times; starting at a multiple of the input avoids most
// regrowth, and 64 KiB keeps tiny inputs from growing one small step at a time.
constexpr std::size_t kMinimumFirstSize = 64 * 1024;
constexpr std::size_t kExpectedRatio = 4;

}  // namespace

BoundedOutput::BoundedOutput(ByteBuffer& buffer, std::uint64_t limit, std::size_t encoded_size)
    : buffer_(buffer), limit_(limit) {
  const std::uint64_t largest = std::numeric_limits<std::size_t>::max() - 1;
  ceiling_ = static_cast<std::size_t>(std::min(limit, largest)) + 1;
  std::size_t first = encoded_size > ceiling_ / kExpectedRatio ? ceiling_ : encoded_size * kExpectedRatio;
  buffer_.resize(std::min(ceiling_, std::max(first, kMinimumFirstSize)));
}

MutableByteSpan BoundedOutput::free_space() {
  if (produced_ == buffer_.size() && buffer_.size() < ceiling_)
    buffer_.resize(buffer_.size() > ceiling_ / 2 ? ceiling_ : buffer_.size() * 2);
  return MutableByteSpan(buffer_.data() + produced_, buffer_.size() - produced_);
}

}  // namespace zarrdirect::codec
