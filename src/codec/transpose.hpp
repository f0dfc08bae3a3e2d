// The `transpose` codec (v3 core), also Zarr v2's order 'F' (the dimensions reversed).
//
// Encoding permutes the dimensions: encoded.shape[i] = decoded.shape[order[i]].
#pragma once

#include <cstdint>
#include <span>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

// configuration: {"order": [permutation of 0..rank-1]} (the legacy "C"/"F" strings also accepted).
std::unique_ptr<ArrayToArrayCodec> make_transpose_codec(const nlohmann::json& configuration,
                                                        const ArraySpec& decoded);

// Copies `source` (C order, shape `source_shape`) to `target` so that
// target[i_0..i_n] = source[i_order[0]..]: i.e. target axis k is source axis order[k].
void permute_axes(const std::byte* source, std::span<const std::uint64_t> source_shape,
                  std::span<const std::size_t> order, std::size_t element_size, std::byte* target);

}  // namespace zarrdirect::codec
