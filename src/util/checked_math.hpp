// Overflow-checked arithmetic for sizes that come from untrusted metadata and chunk headers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace zarrdirect {

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// Product of `values`, or nullopt when it overflows 64 bits.
inline std::optional<std::uint64_t> checked_product(std::span<const std::uint64_t> values) {
  std::uint64_t product = 1;
  for (auto v : values) {
    auto next = checked_mul(product, v);
    if (!next) return std::nullopt;
    product = *next;
  }
  return product;
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

}  // namespace zarrdirect
