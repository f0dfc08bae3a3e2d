#include "codec/zfpy_codec.hpp"

#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <zfp.h>

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.zfpy";

// zfpy's mode codes, which numcodecs stores (zfp's zfp_mode values).
constexpr std::int64_t kFixedRate = 2;
constexpr std::int64_t kFixedPrecision = 3;
constexpr std::int64_t kFixedAccuracy = 4;

// Bytes past the stream that its decoder may touch: libzfp reads whole 64-bit words.
constexpr std::size_t kReadSlack = 16;

struct StreamCloser {
  void operator()(bitstream* s) const { stream_close(s); }
};
struct ZfpCloser {
  void operator()(zfp_stream* s) const { zfp_stream_close(s); }
};
struct FieldFree {
  void operator()(zfp_field* f) const { zfp_field_free(f); }
};
using BitStream = std::unique_ptr<bitstream, StreamCloser>;
using ZfpStream = std::unique_ptr<zfp_stream, ZfpCloser>;
using Field = std::unique_ptr<zfp_field, FieldFree>;

// The zfp scalar type of the array's element type; zfp_type_none where zfp has none.
zfp_type zfp_type_of(const DataType& dtype) {
  if (dtype.kind == ScalarKind::signed_int && dtype.size == 4) return zfp_type_int32;
  if (dtype.kind == ScalarKind::signed_int && dtype.size == 8) return zfp_type_int64;
  if (dtype.kind == ScalarKind::floating && dtype.size == 4) return zfp_type_float;
  if (dtype.kind == ScalarKind::floating && dtype.size == 8) return zfp_type_double;
  return zfp_type_none;
}

std::string_view zfp_type_name(zfp_type type) {
  switch (type) {
    case zfp_type_int32: return "int32";
    case zfp_type_int64: return "int64";
    case zfp_type_float: return "float32";
    case zfp_type_double: return "float64";
    default: return "no type";
  }
}

// A stream over `bytes` with its header read into `field`; nullptr where there is no valid header.
struct OpenedStream {
  BitStream bits;
  ZfpStream zfp;
};
OpenedStream open_with_header(std::vector<std::uint8_t>& bytes, zfp_field* field) {
  OpenedStream opened{BitStream(stream_open(bytes.data(), bytes.size())), ZfpStream(nullptr)};
  if (!opened.bits) throw std::bad_alloc();
  opened.zfp.reset(zfp_stream_open(opened.bits.get()));
  if (!opened.zfp) throw std::bad_alloc();
  zfp_stream_rewind(opened.zfp.get());
  if (zfp_read_header(opened.zfp.get(), field, ZFP_HEADER_FULL) == 0)
    throw_corrupt(kName, "no valid zfp header (magic, field and mode) at the start of the chunk");
  return opened;
}

class ZfpyCodec final : public BytesToBytesCodec {
 public:
  ZfpyCodec(const ArraySpec& spec, std::int64_t mode, double tolerance, double rate, std::int64_t precision)
      : spec_(spec), mode_(mode), tolerance_(tolerance), rate_(rate), precision_(precision) {}
  std::string_view name() const override { return kName; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    // Decoded from a zero-padded copy: the header is read from at least its largest size.
    std::vector<std::uint8_t> bytes(std::max(encoded.size(), std::size_t{ZFP_HEADER_MAX_BITS / 8 + 1}) + kReadSlack, 0);
    if (!encoded.empty()) std::memcpy(bytes.data(), encoded.data(), encoded.size());
    Field field(zfp_field_alloc());
    if (!field) throw std::bad_alloc();
    OpenedStream opened = open_with_header(bytes, field.get());
    const zfp_type type = zfp_field_type(field.get());
    const zfp_type expected = zfp_type_of(spec_.dtype);
    if (type != expected)
      throw_corrupt(kName, fmt::format("the stream holds {} values, the chunk is {}", zfp_type_name(type),
                                       spec_.dtype.name()));
    const std::uint64_t count = zfp_field_size(field.get(), nullptr);
    const std::uint64_t nbytes = count * zfp_type_size(type);
    if (count != spec_.num_elements() || nbytes > max_decoded_size)
      throw_corrupt(kName, fmt::format("the stream holds {} values, the chunk {}", count, spec_.num_elements()));
    // The most bytes the stream's mode can use for this field, header included: libzfp reads that
    // far whatever the data says, so the copy must reach it.
    const std::size_t most = zfp_stream_maximum_size(opened.zfp.get(), field.get());
    if (most == 0 || most > nbytes * 8 + 4096)
      throw_corrupt(kName, fmt::format("the stream's mode allows {} bytes for {} bytes of values", most, nbytes));
    if (bytes.size() < most + kReadSlack) {
      opened = OpenedStream{};
      bytes.resize(most + kReadSlack, 0);
      opened = open_with_header(bytes, field.get());
    }
    decoded.resize(static_cast<std::size_t>(nbytes));
    zfp_field_set_pointer(field.get(), decoded.data());
    if (zfp_decompress(opened.zfp.get(), field.get()) == 0) throw_corrupt(kName, "decompression failed");
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    const zfp_type type = zfp_type_of(spec_.dtype);
    if (type == zfp_type_none)
      throw Error(ErrorKind::unsupported, fmt::format("codec {}: zfp compresses int32, int64, float32 and float64, "
                                                      "not {}",
                                                      kName, spec_.dtype.name()));
    if (spec_.shape.size() > 4)
      throw Error(ErrorKind::unsupported, fmt::format("codec {}: zfp compresses up to 4 dimensions, not {}", kName,
                                                      spec_.shape.size()));
    if (decoded.size() != spec_.nbytes())
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: {} bytes for a chunk of {}", kName,
                                                           decoded.size(), spec_.nbytes()));
    // zfp's x is the fastest axis: the chunk's last.
    std::vector<std::size_t> extents(spec_.shape.rbegin(), spec_.shape.rend());
    if (extents.empty()) extents.push_back(1);
    void* data = const_cast<std::byte*>(decoded.data());  // zfp_compress only reads the field
    Field field(extents.size() == 1   ? zfp_field_1d(data, type, extents[0])
                : extents.size() == 2 ? zfp_field_2d(data, type, extents[0], extents[1])
                : extents.size() == 3 ? zfp_field_3d(data, type, extents[0], extents[1], extents[2])
                                      : zfp_field_4d(data, type, extents[0], extents[1], extents[2], extents[3]));
    if (!field) throw std::bad_alloc();
    ZfpStream zfp(zfp_stream_open(nullptr));
    if (!zfp) throw std::bad_alloc();
    // As zfpy: the first parameter given picks the mode (numcodecs leaves the others at -1).
    if (mode_ == kFixedAccuracy && tolerance_ >= 0) zfp_stream_set_accuracy(zfp.get(), tolerance_);
    else if (mode_ == kFixedRate && rate_ >= 0)
      zfp_stream_set_rate(zfp.get(), rate_, type, static_cast<uint>(extents.size()), zfp_false);
    else if (mode_ == kFixedPrecision && precision_ >= 0)
      zfp_stream_set_precision(zfp.get(), static_cast<uint>(precision_));
    encoded.assign(zfp_stream_maximum_size(zfp.get(), field.get()), std::byte{0});
    BitStream bits(stream_open(encoded.data(), encoded.size()));
    if (!bits) throw std::bad_alloc();
    zfp_stream_set_bit_stream(zfp.get(), bits.get());
    zfp_stream_rewind(zfp.get());
    if (zfp_write_header(zfp.get(), field.get(), ZFP_HEADER_FULL) == 0)
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: writing the header failed", kName));
    const std::size_t size = zfp_compress(zfp.get(), field.get());
    if (size == 0) throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: compression failed", kName));
    encoded.resize(size);
  }

  // What decode() accepts at most: eight bytes of stream per byte of values, and the header.
  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override { return decoded_size * 8 + 4096; }

 private:
  ArraySpec spec_;
  std::int64_t mode_;
  double tolerance_;
  double rate_;
  std::int64_t precision_;
};

double number_or(const nlohmann::json& configuration, const char* field, double fallback) {
  if (!has_setting(configuration, field)) return fallback;
  if (!configuration[field].is_number())
    throw_bad_config(kName, fmt::format("\"{}\" must be a number", field));
  return configuration[field].get<double>();
}

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_numcodecs_zfpy_codec(const nlohmann::json& configuration, const ArraySpec& decoded) {
  const double mode = number_or(configuration, "mode", static_cast<double>(kFixedAccuracy));
  if (mode != kFixedRate && mode != kFixedPrecision && mode != kFixedAccuracy)
    throw_bad_config(kName, fmt::format("\"mode\" is {}, expected 2 (fixed rate), 3 (fixed precision) or 4 (fixed "
                                        "accuracy)",
                                        mode));
  const double precision = number_or(configuration, "precision", -1);
  return std::make_unique<ZfpyCodec>(decoded, static_cast<std::int64_t>(mode), number_or(configuration, "tolerance", -1),
                                     number_or(configuration, "rate", -1), static_cast<std::int64_t>(precision));
}

}  // namespace zarrdirect::codec
