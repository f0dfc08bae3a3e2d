// The built-in sample: a smooth 3-d uint16 signal with a few bits of noise, like a microscopy
// volume, so compressors see realistic ratios.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zarrdirect::cli {

// The sample's attributes say what it is and which generator wrote it, so that the demo can
// tell its own (possibly older) sample from an array that merely sits at the same path.
inline constexpr const char* kSampleDescription = "zarrdirect built-in sample";
inline constexpr int kSampleVersion = 2;  // 2: the signal spans about 150..1900 (microscopy-like)

std::vector<std::uint16_t> sample_volume(std::uint64_t nz, std::uint64_t ny, std::uint64_t nx);

// v3 metadata for the sample with the named codec setup: none, zstd, gzip, blosc, sharded.
nlohmann::json sample_metadata(const std::vector<std::uint64_t>& shape, const std::vector<std::uint64_t>& chunks,
                               const std::string& codec);

void write_sample(const std::filesystem::path& path, const std::vector<std::uint64_t>& shape,
                  const std::vector<std::uint64_t>& chunks, const std::string& codec);

}  // namespace zarrdirect::cli
