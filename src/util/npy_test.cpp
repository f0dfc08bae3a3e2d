#include "util/npy.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

TEST(Npy, RoundTrip) {
  test::TempDir dir;
  std::vector<std::uint16_t> values{1, 2, 3, 4, 5, 6};
  std::vector<std::uint64_t> shape{2, 3};
  write_npy(dir / "a.npy", {ScalarKind::unsigned_int, 2}, shape, std::as_bytes(std::span(values)));
  NpyArray array = read_npy(dir / "a.npy");
  EXPECT_EQ(array.shape, shape);
  EXPECT_EQ(array.dtype, (DataType{ScalarKind::unsigned_int, 2}));
  auto native = array.native_c_order();
  ASSERT_EQ(native.size(), 12u);
  EXPECT_EQ(std::memcmp(native.data(), values.data(), 12), 0);
  // The header is padded so the data starts at a multiple of 64 bytes.
  EXPECT_EQ(std::filesystem::file_size(dir / "a.npy") % 64, 12u);
}

TEST(Npy, ZeroAndOneDimensionalShapes) {
  test::TempDir dir;
  std::int32_t scalar = -7;
  write_npy(dir / "s.npy", {ScalarKind::signed_int, 4}, {}, std::as_bytes(std::span(&scalar, 1)));
  EXPECT_TRUE(read_npy(dir / "s.npy").shape.empty());
  std::vector<std::uint8_t> five{1, 2, 3, 4, 5};
  std::vector<std::uint64_t> shape{5};
  write_npy(dir / "v.npy", {ScalarKind::unsigned_int, 1}, shape, std::as_bytes(std::span(five)));
  EXPECT_EQ(read_npy(dir / "v.npy").shape, shape);
}

TEST(Npy, FortranOrderBigEndianIsConverted) {
  test::TempDir dir;
  // A 2x3 big-endian uint16 array in Fortran order: column-major [[1,2,3],[4,5,6]].
  std::string header = "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  for (char v : {char{1}, char{4}, char{2}, char{5}, char{3}, char{6}}) {
    file.push_back('\0');
    file.push_back(v);
  }
  test::write_text(dir / "f.npy", file);
  auto native = read_npy(dir / "f.npy").native_c_order();
  std::vector<std::uint16_t> values(6);
  std::memcpy(values.data(), native.data(), 12);
  EXPECT_EQ(values, (std::vector<std::uint16_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, BadFilesAreCorruptData) {
  test::TempDir dir;
  test::write_text(dir / "a.npy", "not an npy file at all");
  EXPECT_THROW(read_npy(dir / "a.npy"), Error);
  EXPECT_THROW(read_npy(dir / "missing.npy"), Error);
  std::vector<std::uint8_t> short_data{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 60, 0};
  std::string header = "{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }";
  header.resize(59, ' ');
  header.push_back('\n');
  short_data.insert(short_data.end(), header.begin(), header.end());
  short_data.push_back(1);  // 1 byte for 8 expected
  test::write_bytes(dir / "b.npy", short_data);
  try {
    read_npy(dir / "b.npy");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
  }
}

}  // namespace
}  // namespace zarrdirect
