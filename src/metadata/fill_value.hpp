// Fill values: the JSON forms of Zarr v2 and v3, turned into one element's native bytes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/dtype.hpp"

namespace zarrdirect {

enum class FillValueDialect { v2, v3 };

// Encodes `value` as one element of `type` in native byte order. Throws
// Error(invalid_metadata) naming `where` and the field fill_value when the value does not fit
// the type (a fraction for an integer type, out of range, a string that is no special value).
std::vector<std::byte> parse_fill_value(const nlohmann::json& value, const DataType& type,
                                        FillValueDialect dialect, const std::string& where);

// IEEE half precision from single precision, rounding to nearest even.
std::uint16_t float_to_half(float value);
// The same from double precision directly, as NumPy's double->half: through float a double just
// above or below a tie between two halves can land on the tie and round the wrong way.
std::uint16_t double_to_half(double value);
float half_to_float(std::uint16_t bits);

}  // namespace zarrdirect
