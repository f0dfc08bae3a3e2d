#include "util/npy.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "util/box_copy.hpp"
#include "util/output_file.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

void write_npy(const std::filesystem::path& path, const DataType& dtype, std::span<const std::uint64_t> shape,
               std::span<const std::byte> data) {
  // Checked before anything is created: a mismatch would write a file numpy.load refuses.
  std::uint64_t expected = dtype.size;
  for (auto extent : shape) expected = extent == 0 || expected <= UINT64_MAX / extent ? expected * extent : UINT64_MAX;
  if (expected != data.size())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: {} bytes of data for shape ({}) of {}", path.string(), data.size(),
                            fmt::join(shape, ", "), dtype.name()));
  // NumPy's tuple syntax: "()", "(5,)", "(2, 3)".
  std::string shape_text = shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   dtype.numpy_typestr(), shape_text);
  // Magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64.
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  // Written beside the target and renamed over it when complete: a failure (full disk, size
  // limit) leaves an existing file as it was, and never a truncated .npy under its name.
  OutputFile out(path);
  const char magic[] = "\x93NUMPY\x01\x00";
  auto length = static_cast<std::uint16_t>(header.size());
  const char length_bytes[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(std::as_bytes(std::span(magic, 8)));
  out.write(std::as_bytes(std::span(length_bytes)));
  out.write(std::as_bytes(std::span(header)));
  out.write(data);
  out.commit();
}

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, fmt::format("{}: cannot open", path.string()));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) -> NpyArray {
    throw Error(ErrorKind::corrupt_data, fmt::format("{}: not a .npy file: {}", path.string(), why));
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) return bad("no magic");
  std::size_t header_length, header_start;
  if (bytes[6] == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else {
    if (bytes.size() < 12) return bad("short header");
    header_length = 0;
    for (int i = 3; i >= 0; --i) header_length = (header_length << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  }
  if (header_start + header_length > bytes.size()) return bad("header runs past the end");
  std::string header(bytes.data() + header_start, header_length);
  std::smatch match;
  NpyArray array;
  if (!std::regex_search(header, match, std::regex("'descr':\\s*'([^']+)'"))) return bad("no descr");
  auto typestr = parse_numpy_typestr(match[1].str());
  array.dtype = typestr.type;
  array.order = typestr.order == ByteOrder::not_applicable ? native_byte_order() : typestr.order;
  array.fortran_order = header.find("'fortran_order': True") != std::string::npos;
  if (!std::regex_search(header, match, std::regex("'shape':\\s*\\(([^)]*)\\)"))) return bad("no shape");
  std::string shape_text = match[1].str();
  std::regex number("\\d+");
  for (auto it = std::sregex_iterator(shape_text.begin(), shape_text.end(), number); it != std::sregex_iterator(); ++it)
    array.shape.push_back(std::stoull(it->str()));
  std::uint64_t count = 1;
  for (auto extent : array.shape) count *= extent;
  std::size_t data_start = header_start + header_length;
  if (bytes.size() - data_start != count * array.dtype.size) return bad("data size does not match the shape");
  array.data.resize(bytes.size() - data_start);
  std::memcpy(array.data.data(), bytes.data() + data_start, array.data.size());
  return array;
}

std::vector<std::byte> NpyArray::native_c_order() const {
  std::vector<std::byte> out = data;
  if (order != native_byte_order()) byteswap_in_place(out.data(), out.size() / dtype.size, dtype);
  if (fortran_order && shape.size() > 1) {
    // Fortran order is C order of the reversed shape: copy that "chunk" whole into a C-order
    // destination whose strides are the reversed C strides of `shape`.
    const std::size_t rank = shape.size();
    if (rank > kMaxRank) throw Error(ErrorKind::unsupported, fmt::format(".npy array of {} dimensions", rank));
    std::vector<std::byte> c_order(out.size());
    DestinationLayout c_layout = DestinationLayout::contiguous(c_order.data(), shape, dtype.size);
    DestinationLayout reversed;
    reversed.data = c_order.data();
    reversed.rank = rank;
    reversed.element_size = dtype.size;
    ChunkBox box;
    box.rank = rank;
    for (std::size_t k = 0; k < rank; ++k) {
      reversed.shape[k] = box.chunk_shape[k] = box.extent[k] = shape[rank - 1 - k];
      reversed.byte_strides[k] = c_layout.byte_strides[rank - 1 - k];
    }
    copy_box_to_host(out.data(), box, reversed);
    return c_order;
  }
  return out;
}

}  // namespace zarrdirect
