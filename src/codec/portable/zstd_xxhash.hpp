// XXH64 with seed 0: a zstd frame's optional content checksum is its low 32 bits over the decoded
// content (RFC 8878, 3.1.1). Written from the algorithm's description (the five 64-bit primes,
// four 32-byte-stripe accumulators, then 8-, 4- and 1-byte tails and the final avalanche).
#pragma once

#include <cstdint>

#include "codec/portable/zstd_bits.hpp"

namespace zarrdirect::codec::portable::zstd_detail {

namespace xxhash_detail {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ull;

ZD_HOST_DEVICE inline std::uint64_t rotl(std::uint64_t x, std::uint32_t r) { return (x << r) | (x >> (64 - r)); }

ZD_HOST_DEVICE inline std::uint64_t accumulate(std::uint64_t acc, std::uint64_t input) {
  acc += input * kPrime2;
  return rotl(acc, 31) * kPrime1;
}

ZD_HOST_DEVICE inline std::uint64_t merge(std::uint64_t acc, std::uint64_t value) {
  acc ^= accumulate(0, value);
  return acc * kPrime1 + kPrime4;
}

}  // namespace xxhash_detail

ZD_HOST_DEVICE inline std::uint64_t xxhash64(const std::uint8_t* data, std::uint64_t size) {
  using namespace xxhash_detail;
  std::uint64_t i = 0;
  std::uint64_t h;
  if (size >= 32) {
    std::uint64_t v1 = kPrime1 + kPrime2;
    std::uint64_t v2 = kPrime2;
    std::uint64_t v3 = 0;
    std::uint64_t v4 = 0 - kPrime1;
    for (; i + 32 <= size; i += 32) {
      v1 = accumulate(v1, le64(data + i));
      v2 = accumulate(v2, le64(data + i + 8));
      v3 = accumulate(v3, le64(data + i + 16));
      v4 = accumulate(v4, le64(data + i + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = kPrime5;
  }
  h += size;
  for (; i + 8 <= size; i += 8) {
    h ^= accumulate(0, le64(data + i));
    h = rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (i + 4 <= size) {
    h ^= static_cast<std::uint64_t>(le32(data + i)) * kPrime1;
    h = rotl(h, 23) * kPrime2 + kPrime3;
    i += 4;
  }
  for (; i < size; ++i) {
    h ^= data[i] * kPrime5;
    h = rotl(h, 11) * kPrime1;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace zarrdirect::codec::portable::zstd_detail
