// NumPy .npy files (format 1.0 / 2.0): what `zarrdirect read --output` writes and the tests
// read expected values from.
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

// Writes C-order, native-order `data` as an .npy file.
void write_npy(const std::filesystem::path& path, const DataType& dtype, std::span<const std::uint64_t> shape,
               std::span<const std::byte> data);

NpyArray read_npy(const std::filesystem::path& path);

}  // namespace zarrdirect
