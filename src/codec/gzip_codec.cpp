#include "codec/gzip_codec.hpp"

#include "codec/deflate_codec.hpp"

namespace zarrdirect::codec {

std::unique_ptr<BytesToBytesCodec> make_gzip_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view name = "gzip";
  // The v3 spec requires "level"; a missing one only matters for encoding, so zlib's default serves.
  return std::make_unique<DeflateCodec>(name, DeflateWrapper::gzip,
                                        read_deflate_level(configuration, name, -1));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_gzip_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view name = "numcodecs.gzip";
  // numcodecs.GZip() defaults to level 1.
  return std::make_unique<DeflateCodec>(name, DeflateWrapper::gzip, read_deflate_level(configuration, name, 1));
}

}  // namespace zarrdirect::codec
