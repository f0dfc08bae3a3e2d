// Output space for streaming decoders that must stop at a size limit.
//
// A stream's own claims about its size are not trusted. The buffer grows as the decoder produces
// output, but never past limit + 1 bytes: filling that one extra byte proves the stream holds more
// than the limit, so a decompression bomb is caught without ever allocating what it would expand to.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

class BoundedOutput {
 public:
  // `buffer` is the caller's reusable scratch; `encoded_size` sizes the first allocation.
  BoundedOutput(ByteBuffer& buffer, std::uint64_t limit, std::size_t encoded_size);

  // Room after the bytes produced so far, growing the buffer when it is full. Never empty before
  // exceeded() is true.
  MutableByteSpan free_space();
  // Records that the decoder wrote `count` bytes at the start of free_space().
  void commit(std::size_t count) { produced_ += count; }

  std::size_t produced() const { return produced_; }
  bool exceeded() const { return produced_ > limit_; }
  std::uint64_t limit() const { return limit_; }

  // Shrinks the buffer to the bytes produced.
  void finish() { buffer_.resize(produced_); }

 private:
  ByteBuffer& buffer_;
  std::uint64_t limit_;
  std::size_t ceiling_;  // limit + 1, as far as memory sizes go
  std::size_t produced_ = 0;
};

}  // namespace zarrdirect::codec
