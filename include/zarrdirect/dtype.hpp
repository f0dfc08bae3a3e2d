// Element types of Zarr arrays.
//
// A DataType is what an element *is* (kind and size). Byte order is not part of it: in Zarr v3 the
// byte order belongs to the `bytes` codec, and in memory zarrdirect always hands out native order.
// Zarr v2 typestrings ("<u2", ">f8", "|b1") are split into a DataType and a ByteOrder on parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zarrdirect {

enum class ScalarKind : std::uint8_t { boolean, signed_int, unsigned_int, floating, complex };

enum class ByteOrder : std::uint8_t { little, big, not_applicable };

// The byte order of this machine.
constexpr ByteOrder native_byte_order() {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return ByteOrder::big;
#else
  return ByteOrder::little;
#endif
}

struct DataType {
  ScalarKind kind = ScalarKind::unsigned_int;
  std::uint8_t size = 1;  // bytes per element; complex64 is 8

  // The bytes a byte swap exchanges as a unit: the whole element, or each half of a complex.
  std::size_t swap_unit() const { return kind == ScalarKind::complex ? size / 2u : size; }

  // "uint16", "complex64", "bool": the Zarr v3 data_type name.
  std::string name() const;
  // "<u2", "|b1": the NumPy array-interface typestring in the given byte order.
  std::string numpy_typestr(ByteOrder order = native_byte_order()) const;

  friend bool operator==(const DataType&, const DataType&) = default;
};

// Parses a Zarr v3 data_type name; throws Error(unsupported) for names zarrdirect does not know.
DataType parse_v3_data_type(std::string_view name);

struct TypestrParts {
  DataType type;
  ByteOrder order;
};
// Parses a NumPy / Zarr v2 typestring such as "<u2"; refuses object, string and structured types.
TypestrParts parse_numpy_typestr(std::string_view typestr);

// Reverses the bytes of each element of `data` (count elements of `type`), in place.
void byteswap_in_place(void* data, std::size_t count, const DataType& type);

}  // namespace zarrdirect
