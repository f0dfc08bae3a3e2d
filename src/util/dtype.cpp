#include "zarrdirect/dtype.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

struct NamedType {
  std::string_view name;
  DataType type;
};

constexpr std::array<NamedType, 14> kV3Types{{
    {"bool", {ScalarKind::boolean, 1}},
    {"int8", {ScalarKind::signed_int, 1}},
    {"int16", {ScalarKind::signed_int, 2}},
    {"int32", {ScalarKind::signed_int, 4}},
    {"int64", {ScalarKind::signed_int, 8}},
    {"uint8", {ScalarKind::unsigned_int, 1}},
    {"uint16", {ScalarKind::unsigned_int, 2}},
    {"uint32", {ScalarKind::unsigned_int, 4}},
    {"uint64", {ScalarKind::unsigned_int, 8}},
    {"float16", {ScalarKind::floating, 2}},
    {"float32", {ScalarKind::floating, 4}},
    {"float64", {ScalarKind::floating, 8}},
    {"complex64", {ScalarKind::complex, 8}},
    {"complex128", {ScalarKind::complex, 16}},
}};

char numpy_kind_letter(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::boolean: return 'b';
    case ScalarKind::signed_int: return 'i';
    case ScalarKind::unsigned_int: return 'u';
    case ScalarKind::floating: return 'f';
    case ScalarKind::complex: return 'c';
  }
  return '?';
}

// Word-at-a-time swaps: memcpy keeps unaligned buffers legal and compiles to plain loads.
template <typename Word, Word (*Swap)(Word)>
void swap_words(std::byte* data, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    Word word;
    std::memcpy(&word, data + i * sizeof(Word), sizeof(Word));
    word = Swap(word);
    std::memcpy(data + i * sizeof(Word), &word, sizeof(Word));
  }
}
std::uint16_t swap16(std::uint16_t v) { return __builtin_bswap16(v); }
std::uint32_t swap32(std::uint32_t v) { return __builtin_bswap32(v); }
std::uint64_t swap64(std::uint64_t v) { return __builtin_bswap64(v); }

}  // namespace

std::string DataType::name() const {
  for (const auto& named : kV3Types)
    if (named.type == *this) return std::string(named.name);
  return fmt::format("<kind {} size {}>", static_cast<int>(kind), size);
}

std::string DataType::numpy_typestr(ByteOrder order) const {
  char order_char = size == 1 ? '|' : (order == ByteOrder::big ? '>' : '<');
  return fmt::format("{}{}{}", order_char, numpy_kind_letter(kind), size);
}

DataType parse_v3_data_type(std::string_view name) {
  for (const auto& named : kV3Types)
    if (named.name == name) return named.type;
  throw Error(ErrorKind::unsupported, fmt::format("data_type {} is not supported", quote(name)));
}

TypestrParts parse_numpy_typestr(std::string_view typestr) {
  auto refuse = [&](std::string_view why) -> TypestrParts {
    throw Error(ErrorKind::unsupported, fmt::format("dtype {}: {}", quote(typestr), why));
  };
  if (typestr.size() >= 2 && typestr[1] == 'O')
    return refuse("object arrays are refused: they would need pickle to decode");
  if (typestr.size() < 3) return refuse("not a NumPy typestring such as \"<u2\"");
  ByteOrder order;
  switch (typestr[0]) {
    case '<': order = ByteOrder::little; break;
    case '>': order = ByteOrder::big; break;
    case '|': order = ByteOrder::not_applicable; break;
    case '=': order = native_byte_order(); break;
    default: return refuse("the first character must be '<', '>' or '|'");
  }
  // The kind first: "<M8[ns]" is refused as a datetime, not for the shape of its size.
  DataType type;
  switch (typestr[1]) {
    case 'b': type.kind = ScalarKind::boolean; break;
    case 'i': type.kind = ScalarKind::signed_int; break;
    case 'u': type.kind = ScalarKind::unsigned_int; break;
    case 'f': type.kind = ScalarKind::floating; break;
    case 'c': type.kind = ScalarKind::complex; break;
    case 'M': return refuse("datetime64 is not supported (only numeric kinds b, i, u, f and c are)");
    case 'm': return refuse("timedelta64 is not supported (only numeric kinds b, i, u, f and c are)");
    case 'U':
    case 'S':
    case 'V': return refuse("strings and raw bytes are not supported (only numeric kinds b, i, u, f and c are)");
    default: return refuse("only numeric kinds b, i, u, f and c are supported");
  }
  std::string_view size_text = typestr.substr(2);
  if (size_text.size() > 2 ||
      !std::all_of(size_text.begin(), size_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return refuse("the size must be a small number of bytes");
  int size = std::stoi(std::string(size_text));
  type.size = static_cast<std::uint8_t>(size);
  bool known = std::any_of(kV3Types.begin(), kV3Types.end(),
                           [&](const NamedType& named) { return named.type == type; });
  if (!known) return refuse("no such numeric type");
  if (size == 1) order = ByteOrder::not_applicable;
  // '|' on a multi-byte type is NumPy's native order (np.dtype("|f4") is "<f4" here), and
  // zarr-python reads such a .zarray so; left "not applicable" it failed as a bytes codec
  // without "endian".
  else if (order == ByteOrder::not_applicable) order = native_byte_order();
  return {type, order};
}

void byteswap_in_place(void* data, std::size_t count, const DataType& type) {
  auto* bytes = static_cast<std::byte*>(data);
  std::size_t unit = type.swap_unit();
  std::size_t units = count * (type.size / unit);
  switch (unit) {
    case 1: return;
    case 2: swap_words<std::uint16_t, swap16>(bytes, units); return;
    case 4: swap_words<std::uint32_t, swap32>(bytes, units); return;
    case 8: swap_words<std::uint64_t, swap64>(bytes, units); return;
    default: break;
  }
}

}  // namespace zarrdirect
