#include "zarrdirect/dtype.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

TEST(DataType, EveryV3NameRoundTrips) {
  struct Expected {
    const char* name;
    ScalarKind kind;
    int size;
    const char* typestr_little;
  };
  for (const auto& e : std::vector<Expected>{{"bool", ScalarKind::boolean, 1, "|b1"},
                                             {"int8", ScalarKind::signed_int, 1, "|i1"},
                                             {"int16", ScalarKind::signed_int, 2, "<i2"},
                                             {"int32", ScalarKind::signed_int, 4, "<i4"},
                                             {"int64", ScalarKind::signed_int, 8, "<i8"},
                                             {"uint8", ScalarKind::unsigned_int, 1, "|u1"},
                                             {"uint16", ScalarKind::unsigned_int, 2, "<u2"},
                                             {"uint32", ScalarKind::unsigned_int, 4, "<u4"},
                                             {"uint64", ScalarKind::unsigned_int, 8, "<u8"},
                                             {"float16", ScalarKind::floating, 2, "<f2"},
                                             {"float32", ScalarKind::floating, 4, "<f4"},
                                             {"float64", ScalarKind::floating, 8, "<f8"},
                                             {"complex64", ScalarKind::complex, 8, "<c8"},
                                             {"complex128", ScalarKind::complex, 16, "<c16"}}) {
    SCOPED_TRACE(e.name);
    DataType type = parse_v3_data_type(e.name);
    EXPECT_EQ(type.kind, e.kind);
    EXPECT_EQ(type.size, e.size);
    EXPECT_EQ(type.name(), e.name);
    EXPECT_EQ(type.numpy_typestr(ByteOrder::little), e.typestr_little);
    auto parts = parse_numpy_typestr(e.typestr_little);
    EXPECT_EQ(parts.type, type);
    EXPECT_EQ(parts.order, e.size == 1 ? ByteOrder::not_applicable : ByteOrder::little);
  }
}

TEST(DataType, UnknownV3NamesAreUnsupported) {
  for (const char* name : {"float8", "string", "", "Int8", "uint128", "r16", "bfloat16"}) {
    try {
      parse_v3_data_type(name);
      ADD_FAILURE() << name << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::unsupported);
      EXPECT_NE(std::string(e.what()).find("data_type"), std::string::npos) << e.what();
    }
  }
}

TEST(DataType, TypestringByteOrders) {
  EXPECT_EQ(parse_numpy_typestr(">f8").order, ByteOrder::big);
  EXPECT_EQ(parse_numpy_typestr("<f8").order, ByteOrder::little);
  EXPECT_EQ(parse_numpy_typestr("=u4").order, native_byte_order());
  EXPECT_EQ(parse_numpy_typestr(">u1").order, ByteOrder::not_applicable);  // one byte: no order
  EXPECT_EQ(parse_numpy_typestr("|b1").type.kind, ScalarKind::boolean);
  EXPECT_EQ(parse_numpy_typestr("|f4").order, native_byte_order());  // NumPy: native, as "=f4"
  EXPECT_EQ(parse_numpy_typestr("|i2").type, (DataType{ScalarKind::signed_int, 2}));
  EXPECT_EQ(parse_numpy_typestr(">c16").type, (DataType{ScalarKind::complex, 16}));
  EXPECT_EQ((DataType{ScalarKind::floating, 4}).numpy_typestr(ByteOrder::big), ">f4");
  EXPECT_EQ((DataType{ScalarKind::unsigned_int, 1}).numpy_typestr(ByteOrder::big), "|u1");
}

std::string refusal(const std::string& typestr) {
  try {
    parse_numpy_typestr(typestr);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("dtype"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << typestr << " parsed";
  return {};
}

TEST(DataType, TypestringsRefused) {
  EXPECT_NE(refusal("|O").find("object"), std::string::npos);
  EXPECT_NE(refusal("|O8").find("object"), std::string::npos);
  EXPECT_NE(refusal("<U10").find("strings"), std::string::npos);
  EXPECT_NE(refusal("|S5").find("strings"), std::string::npos);
  EXPECT_NE(refusal("<M8[ns]").find("datetime64"), std::string::npos);
  EXPECT_NE(refusal("<m8[s]").find("timedelta64"), std::string::npos);
  refusal("<f3");
  refusal("<i16");
  refusal("<u");
  refusal("");
  refusal("u2");
  refusal("xu2");
  refusal("<u123");
  refusal("<u\xc3\xa9");
  refusal("|V8");
  refusal("<b2");
  refusal("<c4");
}

TEST(DataType, ByteswapSwapsEachElement) {
  std::vector<std::uint8_t> u2{1, 2, 3, 4};
  byteswap_in_place(u2.data(), 2, {ScalarKind::unsigned_int, 2});
  EXPECT_EQ(u2, (std::vector<std::uint8_t>{2, 1, 4, 3}));
  std::vector<std::uint8_t> f4{1, 2, 3, 4, 5, 6, 7, 8};
  byteswap_in_place(f4.data(), 2, {ScalarKind::floating, 4});
  EXPECT_EQ(f4, (std::vector<std::uint8_t>{4, 3, 2, 1, 8, 7, 6, 5}));
  std::vector<std::uint8_t> i8{1, 2, 3, 4, 5, 6, 7, 8};
  byteswap_in_place(i8.data(), 1, {ScalarKind::signed_int, 8});
  EXPECT_EQ(i8, (std::vector<std::uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
  // Complex numbers swap each half on its own.
  std::vector<std::uint8_t> c8{1, 2, 3, 4, 5, 6, 7, 8};
  byteswap_in_place(c8.data(), 1, {ScalarKind::complex, 8});
  EXPECT_EQ(c8, (std::vector<std::uint8_t>{4, 3, 2, 1, 8, 7, 6, 5}));
  std::vector<std::uint8_t> c16(16);
  for (int i = 0; i < 16; ++i) c16[i] = static_cast<std::uint8_t>(i);
  byteswap_in_place(c16.data(), 1, {ScalarKind::complex, 16});
  EXPECT_EQ(c16, (std::vector<std::uint8_t>{7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8}));
  std::vector<std::uint8_t> u1{1, 2, 3};
  byteswap_in_place(u1.data(), 3, {ScalarKind::unsigned_int, 1});
  EXPECT_EQ(u1, (std::vector<std::uint8_t>{1, 2, 3}));
}

TEST(DataType, ByteswapHandlesUnalignedBuffers) {
  std::vector<std::uint8_t> bytes{0, 1, 2, 3, 4, 5, 6, 7, 8};
  byteswap_in_place(bytes.data() + 1, 1, {ScalarKind::unsigned_int, 8});
  EXPECT_EQ(bytes, (std::vector<std::uint8_t>{0, 8, 7, 6, 5, 4, 3, 2, 1}));
  double value = 1.5, swapped;
  std::memcpy(&swapped, &value, 8);
  byteswap_in_place(&swapped, 1, {ScalarKind::floating, 8});
  byteswap_in_place(&swapped, 1, {ScalarKind::floating, 8});
  EXPECT_EQ(swapped, 1.5);
}

}  // namespace
}  // namespace zarrdirect
