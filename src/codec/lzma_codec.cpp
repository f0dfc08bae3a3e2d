#include "codec/lzma_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <new>

#include <fmt/format.h>
#include <lzma.h>

#include "codec/bounded_output.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.lzma";

// Python's lzma format codes, which numcodecs stores.
enum class Container { automatic = 0, xz = 1, alone = 2, raw = 3 };

// Memory a stream may ask for to decode a chunk: what preset 9 needs (a 64 MiB dictionary) with
// room to spare, or twice the chunk for larger ones. A header asking for more is refused.
constexpr std::uint64_t kMinDecodeMemory = std::uint64_t{256} << 20;

std::string_view container_name(Container container) {
  switch (container) {
    case Container::automatic: return ".xz or .lzma";
    case Container::xz: return ".xz";
    case Container::alone: return ".lzma";
    case Container::raw: return "raw LZMA";
  }
  return "?";
}

// One liblzma stream, ended when it goes out of scope.
class LzmaStream {
 public:
  LzmaStream() = default;
  ~LzmaStream() { lzma_end(&stream_); }
  LzmaStream(const LzmaStream&) = delete;
  LzmaStream& operator=(const LzmaStream&) = delete;
  lzma_stream& get() { return stream_; }

 private:
  lzma_stream stream_ = LZMA_STREAM_INIT;
};

void check_setup(lzma_ret rc, std::string_view what) {
  if (rc == LZMA_MEM_ERROR) throw std::bad_alloc();
  if (rc != LZMA_OK) throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: {} failed ({})", kName, what, static_cast<int>(rc)));
}

class LzmaCodec final : public BytesToBytesCodec {
 public:
  LzmaCodec(Container container, std::int64_t check, std::uint32_t preset, bool custom_filters)
      : container_(container), check_(check), preset_(preset), custom_filters_(custom_filters) {}
  std::string_view name() const override { return kName; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    BoundedOutput output(decoded, max_decoded_size, encoded.size());
    const std::uint64_t twice = max_decoded_size > UINT64_MAX / 2 ? UINT64_MAX : max_decoded_size * 2;
    const std::uint64_t memory = std::max(kMinDecodeMemory, twice);
    ByteSpan rest = encoded;
    // Python's lzma.decompress, which numcodecs calls, reads streams one after another (the .xz
    // decoder takes concatenated streams itself).
    do {
      rest = decode_one_stream(rest, output, memory);
    } while (!rest.empty());
    output.finish();
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    if (custom_filters_)
      throw Error(ErrorKind::unsupported, fmt::format("codec {}: writing with a \"filters\" list is not supported", kName));
    if (container_ != Container::xz && container_ != Container::alone)
      throw Error(ErrorKind::unsupported,
                  fmt::format("codec {}: writing the {} format is not supported (numcodecs cannot either)", kName,
                              container_name(container_)));
    LzmaStream stream;
    if (container_ == Container::xz) {
      const auto check = check_ < 0 ? LZMA_CHECK_CRC64 : static_cast<lzma_check>(check_);
      check_setup(lzma_easy_encoder(&stream.get(), preset_, check), "setting up the encoder");
    } else {
      lzma_options_lzma options;
      if (lzma_lzma_preset(&options, preset_))
        throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: preset {} is not valid", kName, preset_));
      check_setup(lzma_alone_encoder(&stream.get(), &options), "setting up the encoder");
    }
    lzma_stream& s = stream.get();
    encoded.resize(static_cast<std::size_t>(max_encoded_size(decoded.size())));
    s.next_in = reinterpret_cast<const std::uint8_t*>(decoded.data());
    s.avail_in = decoded.size();
    std::size_t written = 0;
    for (;;) {
      if (written == encoded.size()) encoded.resize(encoded.size() * 2);
      s.next_out = reinterpret_cast<std::uint8_t*>(encoded.data() + written);
      s.avail_out = encoded.size() - written;
      const std::size_t offered = s.avail_out;
      const lzma_ret rc = lzma_code(&s, LZMA_FINISH);
      written += offered - s.avail_out;
      if (rc == LZMA_STREAM_END) break;
      if (rc == LZMA_MEM_ERROR) throw std::bad_alloc();
      if (rc != LZMA_OK)
        throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: compression failed ({})", kName, static_cast<int>(rc)));
    }
    encoded.resize(written);
  }

  // liblzma's bound for one .xz stream, which also covers the smaller .lzma header.
  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override {
    const std::size_t bound = lzma_stream_buffer_bound(static_cast<std::size_t>(decoded_size));
    return bound == 0 ? decoded_size + decoded_size / 2 + 4096 : bound;
  }

 private:
  // Decodes the stream at the start of `input`, appending to `output`; returns what follows it.
  ByteSpan decode_one_stream(ByteSpan input, BoundedOutput& output, std::uint64_t memory) const {
    LzmaStream stream;
    lzma_stream& s = stream.get();
    switch (container_) {
      case Container::xz: check_setup(lzma_stream_decoder(&s, memory, LZMA_CONCATENATED), "setting up the decoder"); break;
      case Container::alone: check_setup(lzma_alone_decoder(&s, memory), "setting up the decoder"); break;
      case Container::automatic:
        check_setup(lzma_auto_decoder(&s, memory, LZMA_CONCATENATED), "setting up the decoder");
        break;
      case Container::raw:
        throw Error(ErrorKind::unsupported, fmt::format("codec {}: format 3 (raw LZMA, described only by a "
                                                        "\"filters\" list) is not supported",
                                                        kName));
    }
    s.next_in = reinterpret_cast<const std::uint8_t*>(input.data());
    s.avail_in = input.size();
    for (;;) {
      MutableByteSpan space = output.free_space();
      s.next_out = reinterpret_cast<std::uint8_t*>(space.data());
      s.avail_out = space.size();
      const lzma_ret rc = lzma_code(&s, LZMA_FINISH);
      output.commit(space.size() - s.avail_out);
      if (output.exceeded())
        throw_corrupt(kName, fmt::format("decodes to more than the {} bytes this chunk can hold", output.limit()));
      switch (rc) {
        case LZMA_OK: continue;
        case LZMA_STREAM_END: return input.subspan(input.size() - s.avail_in);
        case LZMA_MEM_ERROR: throw std::bad_alloc();
        case LZMA_MEMLIMIT_ERROR:
          throw_corrupt(kName, fmt::format("the stream needs {} bytes of memory to decode, more than the {} a chunk "
                                           "of {} bytes allows",
                                           lzma_memusage(&s), memory, output.limit()));
        case LZMA_FORMAT_ERROR:
          throw_corrupt(kName, fmt::format("not a {} stream", container_name(container_)));
        case LZMA_OPTIONS_ERROR: throw_corrupt(kName, "the stream's header has options liblzma does not accept");
        case LZMA_DATA_ERROR: throw_corrupt(kName, "invalid compressed data");
        case LZMA_BUF_ERROR: throw_corrupt(kName, "the stream is truncated");
        default: throw_corrupt(kName, fmt::format("decompression failed ({})", static_cast<int>(rc)));
      }
    }
  }

  Container container_;
  std::int64_t check_;
  std::uint32_t preset_;
  bool custom_filters_;
};

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_numcodecs_lzma_codec(const nlohmann::json& configuration, const ArraySpec&) {
  auto member_or = [&](std::string_view field, std::int64_t fallback) {
    return has_setting(configuration, field) ? require_integer(configuration, kName, field) : fallback;
  };
  const std::int64_t format = member_or("format", 1);  // numcodecs' default: lzma.FORMAT_XZ
  if (format < 0 || format > 3) throw_bad_config(kName, fmt::format("\"format\" is {}, expected 0 to 3", format));
  const std::int64_t check = member_or("check", -1);  // -1: the format's default (CRC64 for .xz)
  if (check != -1 && check != LZMA_CHECK_NONE && check != LZMA_CHECK_CRC32 && check != LZMA_CHECK_CRC64 &&
      check != LZMA_CHECK_SHA256)
    throw_bad_config(kName, fmt::format("\"check\" is {}, expected -1, 0, 1, 4 or 10", check));
  // 0-9, optionally with LZMA_PRESET_EXTREME (Python's lzma.PRESET_EXTREME); Python's default 6.
  const std::int64_t preset = member_or("preset", LZMA_PRESET_DEFAULT);
  const std::int64_t level = preset & ~static_cast<std::int64_t>(LZMA_PRESET_EXTREME);
  if (level < 0 || level > 9)
    throw_bad_config(kName, fmt::format("\"preset\" is {}, expected 0 to 9 (with PRESET_EXTREME or not)", preset));
  const bool custom_filters = has_setting(configuration, "filters");
  if (custom_filters && !configuration["filters"].is_array())
    throw_bad_config(kName, "\"filters\" must be null or a list");
  return std::make_unique<LzmaCodec>(static_cast<Container>(format), check, static_cast<std::uint32_t>(preset),
                                     custom_filters);
}

}  // namespace zarrdirect::codec
