// The bytes->bytes codec over deflate_stream shared by the gzip and zlib codecs: they differ only
// in the wrapper around the DEFLATE data and in their configuration.
#pragma once

#include "codec/deflate_stream.hpp"

namespace zarrdirect::codec {

class DeflateCodec final : public BytesToBytesCodec {
 public:
  DeflateCodec(std::string_view name, DeflateWrapper wrapper, int level)
      : name_(name), wrapper_(wrapper), level_(level) {}
  std::string_view name() const override { return name_; }
  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    inflate_bounded(name_, wrapper_, encoded, decoded, max_decoded_size);
  }
  // Deflate streams do not say their size up front; a chunk that decodes to any other size than
  // the chunk's is corrupt for the chain anyway, so this never declines (it throws instead).
  bool decode_exact(ByteSpan encoded, MutableByteSpan decoded) const override {
    inflate_exact(name_, wrapper_, encoded, decoded);
    return true;
  }
  bool always_decodes_exactly() const override { return true; }
  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    deflate_whole(name_, wrapper_, level_, decoded, encoded);
  }
  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override {
    return deflate_bound(wrapper_, decoded_size);
  }

 private:
  std::string_view name_;  // a literal: codec names live as long as the program
  DeflateWrapper wrapper_;
  int level_;
};

}  // namespace zarrdirect::codec
