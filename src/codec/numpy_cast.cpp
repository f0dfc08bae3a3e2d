#include "codec/numpy_cast.hpp"

#include <cstring>

#include "codec/numpy_scalar.hpp"

namespace zarrdirect::codec {

void cast_elements(std::string_view codec, ByteSpan source, const DataType& from, MutableByteSpan target,
                   const DataType& to) {
  const std::size_t count = source.size() / from.size;
  if (from == to) {
    std::memcpy(target.data(), source.data(), source.size());
    return;
  }
  visit_element_type(from, codec, [&]<class From>(From) {
    visit_element_type(to, codec, [&]<class To>(To) {
      for (std::size_t i = 0; i < count; ++i)
        store_element(target.data(), i, numpy_cast<To>(load_element<From>(source.data(), i)));
    });
  });
}

}  // namespace zarrdirect::codec
