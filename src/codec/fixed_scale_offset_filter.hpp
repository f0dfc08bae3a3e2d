// numcodecs' fixed scale-offset filter: `numcodecs.fixedscaleoffset` {offset, scale, dtype, astype}.
//
// Encoding stores round((x - offset) * scale) as astype (rounding ties to even, as np.around);
// decoding computes x / scale + offset and converts it to dtype. The arithmetic happens in the type
// NumPy picks for it: for decoding, astype when that is a float type and float64 otherwise.
#pragma once

#include "codec/codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<ArrayToArrayCodec> make_fixed_scale_offset_filter(const nlohmann::json& configuration,
                                                                  const ArraySpec& decoded);

}  // namespace zarrdirect::codec
