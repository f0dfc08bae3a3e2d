// A process-wide pool of page-aligned host buffers, reused across reads.
//
// Each read's workers need a buffer per thread to read or decode chunks into. Allocating them per
// read costs a page fault per 4 KiB on first touch, which on virtual machines costs more than
// the copy itself; the pool keeps them mapped and warm between reads.
#pragma once

#include <cstddef>
#include <memory>

namespace zarrdirect {

class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(std::byte* data, std::size_t capacity) : data_(data), capacity_(capacity) {}
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();  // returns the memory to the pool

  std::byte* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// A buffer of at least `nbytes`, from the pool when one fits, else newly allocated.
HostBuffer acquire_host_buffer(std::size_t nbytes);

}  // namespace zarrdirect
