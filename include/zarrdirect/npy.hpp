// NumPy .npy files (format 1.0 / 2.0): what `zarrdirect read --output` writes, what the tests read
// expected values from.
//
//   zarrdirect::write_npy("out.npy", result.dtype(), result.shape(), zarrdirect::copy_to_host(result));
//   auto loaded = zarrdirect::read_npy("expected.npy");     // loaded.native_c_order()
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "zarrdirect/dtype.hpp"

namespace zarrdirect {

struct NpyArray {
  DataType dtype;
  ByteOrder order = native_byte_order();
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> data;  // as stored in the file

  // The data in C order and native byte order.
  std::vector<std::byte> native_c_order() const;
};

// Writes C-order, native-order `data` (the product of `shape` elements of `dtype`) as an .npy file.
// Errors: ErrorKind::io naming the path (with the system's reason) when it cannot be written;
// invalid_argument when data's size does not match shape and dtype.
void write_npy(const std::filesystem::path& path, const DataType& dtype, std::span<const std::uint64_t> shape,
               std::span<const std::byte> data);

// Reads an .npy file. Errors: io naming the path; corrupt_data naming the path and the header
// field for a malformed or truncated file.
NpyArray read_npy(const std::filesystem::path& path);

}  // namespace zarrdirect
