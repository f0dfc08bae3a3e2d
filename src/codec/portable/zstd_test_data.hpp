// Test data for the zstd decoders' tests (the serial one, zstd_frame_test.cpp, and the GPU's
// block jobs, src/cuda/zstd_gpu_jobs_test.cpp): frames libzstd writes with chosen settings, its
// own decoding as the reference, and inputs of the kinds chunks hold.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zstd.h>

namespace zarrdirect::codec::portable::zstd_test {

using Bytes = std::vector<std::uint8_t>;

struct Settings {
  int level = 3;
  bool checksum = false;
  bool long_distance = false;
  bool content_size = true;
};

inline Bytes compress(const Bytes& data, const Settings& settings) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, settings.level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, settings.checksum ? 1 : 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, settings.long_distance ? 1 : 0);
  // Without the content size flag the frame header leaves the size out (as streaming writers do).
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, settings.content_size ? 1 : 0);
  Bytes out(ZSTD_compressBound(data.size()));
  const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(n);
  return out;
}

// libzstd's answer for a frame decoded into `capacity` bytes: the bytes, or false.
inline bool reference_decode(const Bytes& frame, std::size_t capacity, Bytes& out) {
  out.assign(capacity, 0);
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) return false;
  out.resize(n);
  return true;
}

inline Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// A smooth signal with a little noise, 2 bytes a sample (like microscopy uint16 data).
inline Bytes signal_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sample = static_cast<std::uint32_t>(1300 + ((i / 2) % 4096) * 300 / 4096 + rng() % 16);
    out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
  }
  return out;
}

// Runs of a few values of random lengths (labels, masks).
inline Bytes run_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out;
  while (out.size() < n) out.insert(out.end(), 1 + rng() % 300, static_cast<std::uint8_t>(rng() % 4));
  out.resize(n);
  return out;
}

// Words from a small vocabulary: text-like, skewed literals and many repeats.
inline Bytes text_bytes(std::size_t n, std::uint32_t seed) {
  static const char* const kWords[] = {"the ", "chunk ", "array ", "zarr ", "of ", "decoded ", "bytes ", "and ",
                                       "frame ", "a ", "block ", "literal ", "match ", "offset\n", "GPU ", "42, "};
  std::mt19937 rng(seed);
  std::string text;
  while (text.size() < n) text += kWords[rng() % 16];
  return Bytes(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(n));
}

// Every kind, by index (used to mix kinds in the loops below).
inline Bytes data_of_kind(int kind, std::size_t n, std::uint32_t seed) {
  switch (kind % 6) {
    case 0: return random_bytes(n, seed);
    case 1: return signal_bytes(n, seed);
    case 2: return run_bytes(n, seed);
    case 3: return text_bytes(n, seed);
    case 4: return Bytes(n, 0);
    default: {  // half random, half repeats of it at long distance
      Bytes out = random_bytes(n / 2, seed);
      const Bytes copy = out;
      out.insert(out.end(), copy.begin(), copy.end());
      out.resize(n);
      return out;
    }
  }
}

inline const char* const kKindNames[] = {"random", "signal", "runs", "text", "zeros", "repeated"};

}  // namespace zarrdirect::codec::portable::zstd_test
