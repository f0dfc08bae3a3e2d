#include "codec/bz2_codec.hpp"

#include <algorithm>
#include <limits>
#include <new>

#include <bzlib.h>
#include <fmt/format.h>

#include "codec/bounded_output.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.bz2";

// libbz2 counts bytes in `unsigned int`; larger buffers go through in slices of this size.
constexpr std::size_t kLargestSlice = std::numeric_limits<unsigned int>::max();

// One decompression stream; libbz2 has no reset, so each bzip2 stream in a chunk gets its own.
class Bz2Decompressor {
 public:
  Bz2Decompressor() {
    const int rc = BZ2_bzDecompressInit(&stream_, 0, 0);
    if (rc == BZ_MEM_ERROR) throw std::bad_alloc();
    if (rc != BZ_OK) throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: setup failed ({})", kName, rc));
  }
  ~Bz2Decompressor() { BZ2_bzDecompressEnd(&stream_); }
  Bz2Decompressor(const Bz2Decompressor&) = delete;
  Bz2Decompressor& operator=(const Bz2Decompressor&) = delete;
  bz_stream& stream() { return stream_; }

 private:
  bz_stream stream_{};
};

bool starts_bz2_stream(ByteSpan bytes) {
  return bytes.size() >= 3 && bytes[0] == std::byte{'B'} && bytes[1] == std::byte{'Z'} && bytes[2] == std::byte{'h'};
}

// Decodes the bzip2 stream at the start of `input`, appending to `output`; returns the input
// bytes it did not consume.
ByteSpan decode_one_stream(ByteSpan input, BoundedOutput& output) {
  Bz2Decompressor decompressor;
  bz_stream& stream = decompressor.stream();
  std::size_t handed = 0;
  for (;;) {
    if (stream.avail_in == 0 && handed < input.size()) {
      const std::size_t slice = std::min(input.size() - handed, kLargestSlice);
      // libbz2's next_in is not const-qualified; it never writes through it.
      stream.next_in = const_cast<char*>(reinterpret_cast<const char*>(input.data() + handed));
      stream.avail_in = static_cast<unsigned int>(slice);
      handed += slice;
    }
    MutableByteSpan space = output.free_space();
    const std::size_t offered = std::min(space.size(), kLargestSlice);
    stream.next_out = reinterpret_cast<char*>(space.data());
    stream.avail_out = static_cast<unsigned int>(offered);
    const int rc = BZ2_bzDecompress(&stream);
    output.commit(offered - stream.avail_out);
    if (output.exceeded())
      throw_corrupt(kName, fmt::format("decodes to more than the {} bytes this chunk can hold", output.limit()));
    if (rc == BZ_STREAM_END) return input.subspan(handed - stream.avail_in);
    if (rc == BZ_DATA_ERROR || rc == BZ_DATA_ERROR_MAGIC) throw_corrupt(kName, "invalid bzip2 data");
    if (rc == BZ_MEM_ERROR) throw std::bad_alloc();
    if (rc != BZ_OK) throw_corrupt(kName, fmt::format("decompression failed ({})", rc));
    // With every input byte consumed and room left, libbz2 has nothing more to give.
    if (stream.avail_in == 0 && handed == input.size() && stream.avail_out > 0)
      throw_corrupt(kName, "the stream is truncated");
  }
}

class Bz2Codec final : public BytesToBytesCodec {
 public:
  explicit Bz2Codec(int level) : level_(level) {}
  std::string_view name() const override { return kName; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    BoundedOutput output(decoded, max_decoded_size, encoded.size());
    ByteSpan rest = encoded;
    // Python's bz2.decompress, which numcodecs uses, reads concatenated streams.
    do {
      rest = decode_one_stream(rest, output);
    } while (starts_bz2_stream(rest));
    if (!rest.empty())
      throw_corrupt(kName, fmt::format("{} bytes of garbage follow the end of the stream", rest.size()));
    output.finish();
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    if (decoded.size() > kLargestSlice / 2)
      throw Error(ErrorKind::unsupported, fmt::format("codec {}: cannot compress {} bytes in one call", kName,
                                                      decoded.size()));
    encoded.resize(static_cast<std::size_t>(max_encoded_size(decoded.size())));
    auto size = static_cast<unsigned int>(encoded.size());
    // libbz2 takes non-const input; it only reads it.
    const int rc = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(encoded.data()), &size,
                                            const_cast<char*>(reinterpret_cast<const char*>(decoded.data())),
                                            static_cast<unsigned int>(decoded.size()), level_, 0, 0);
    if (rc != BZ_OK)
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: compression failed ({})", kName, rc));
    encoded.resize(size);
  }

  // bzip2's documented worst case: 1% larger plus 600 bytes.
  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override {
    return decoded_size + decoded_size / 100 + 600;
  }

 private:
  int level_;
};

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_numcodecs_bz2_codec(const nlohmann::json& configuration, const ArraySpec&) {
  std::int64_t level = 1;  // numcodecs.BZ2() defaults to level 1
  if (configuration.contains("level")) level = require_integer(configuration, kName, "level");
  if (level < 1 || level > 9) throw_bad_config(kName, fmt::format("\"level\" is {}, expected 1 to 9", level));
  return std::make_unique<Bz2Codec>(static_cast<int>(level));
}

}  // namespace zarrdirect::codec
