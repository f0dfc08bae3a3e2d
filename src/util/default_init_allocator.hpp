// An allocator whose value construction leaves trivial elements uninitialized: a
// std::vector<std::byte, DefaultInitAllocator<std::byte>> grows by resize() without writing zeros
// into memory that a read or a decoder overwrites next. For buffers of many megabytes that
// memset (and the page faults it takes first) cost as much as the copy that follows.
#pragma once

#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace zarrdirect {

template <typename T, typename Base = std::allocator<T>>
class DefaultInitAllocator : public Base {
  using Traits = std::allocator_traits<Base>;

 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
  };

  using Base::Base;
  DefaultInitAllocator() = default;
  template <typename U, typename B>
  DefaultInitAllocator(const DefaultInitAllocator<U, B>& other) noexcept : Base(other) {}

  // resize(n) and vector(n): default-initialized (for std::byte: left as they are).
  template <typename U>
  void construct(U* where) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(where)) U;
  }
  // Every other construction (copies, values given) as the base allocator does it.
  template <typename U, typename... Args>
  void construct(U* where, Args&&... args) {
    Traits::construct(static_cast<Base&>(*this), where, std::forward<Args>(args)...);
  }
};

// Bytes that are always written before they are read (file reads, decoder outputs).
using UninitializedBytes = std::vector<std::byte, DefaultInitAllocator<std::byte>>;

}  // namespace zarrdirect
