// Writes Zarr arrays: the built-in sample, test fixtures and fuzz seeds.
//
// Not a full writer (no partial updates, no concurrent writers): it encodes a whole C-order
// array chunk by chunk through the same codec chain the reader decodes with.
#pragma once

#include <filesystem>
#include <span>

#include <nlohmann/json.hpp>

namespace zarrdirect {

struct WriteOptions {
  // Chunks equal to the fill value everywhere are not written (they read back as fill).
  bool skip_fill_chunks = false;
};

// Creates `path` with the metadata document `metadata` (a v3 zarr.json or a v2 .zarray, told
// apart by zarr_format) and the chunks of `data` (C order, native byte order, the full shape).
void write_array(const std::filesystem::path& path, const nlohmann::json& metadata, std::span<const std::byte> data,
                 const WriteOptions& options = {});

}  // namespace zarrdirect
