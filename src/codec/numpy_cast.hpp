// Whole-buffer element type conversion with NumPy's astype semantics (see numpy_scalar.hpp).
#pragma once

#include <string_view>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

// Converts the elements of `source` (of type `from`) into `target` (of type `to`), both in native
// byte order; `target` holds as many elements as `source`. `codec` names the caller in errors.
void cast_elements(std::string_view codec, ByteSpan source, const DataType& from, MutableByteSpan target,
                   const DataType& to);

}  // namespace zarrdirect::codec
