#include "codec/zlib_codec.hpp"

#include "codec/deflate_codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_numcodecs_zlib_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view name = "numcodecs.zlib";
  // numcodecs.Zlib() defaults to level 1.
  return std::make_unique<DeflateCodec>(name, DeflateWrapper::zlib, read_deflate_level(configuration, name, 1));
}

}  // namespace zarrdirect::codec
