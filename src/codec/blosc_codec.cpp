#include "codec/blosc_codec.hpp"

#include <algorithm>
#include <array>

#include <blosc.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zarrdirect::codec {
namespace {

// Blosc's own threads stay off: the engine already decodes different chunks on different threads,
// and the _ctx functions with one thread use no global state.
constexpr int kInternalThreads = 1;

// Bytes a stored chunk may carry after its Blosc frame. A C++ Zarr implementation writes each
// chunk's whole buffer (frame plus BLOSC_MAX_OVERHEAD), and numcodecs decodes such chunks,
// ignoring the tail; so do we. The allowance only widens the stored-size bound (reader, shard
// index) by this much: the frame itself is still checked against its header.
constexpr std::uint64_t kTrailingBytesAllowed = BLOSC_MAX_OVERHEAD;

struct BloscSettings {
  std::string compressor;
  int clevel = 5;
  int shuffle = BLOSC_SHUFFLE;
  std::size_t typesize = 1;
  std::size_t blocksize = 0;  // 0: Blosc chooses
};

class BloscCodec final : public BytesToBytesCodec {
 public:
  BloscCodec(std::string_view name, BloscSettings settings) : name_(name), settings_(std::move(settings)) {}
  std::string_view name() const override { return name_; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    const ByteSpan frame = checked_frame(encoded);
    const std::size_t claimed = checked_claim(frame, max_decoded_size);
    decoded.resize(claimed);
    decompress(frame, decoded);
  }

  bool decode_exact(ByteSpan encoded, MutableByteSpan decoded) const override {
    const ByteSpan frame = checked_frame(encoded);
    if (checked_claim(frame, decoded.size()) != decoded.size()) return false;
    decompress(frame, decoded);
    return true;
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    if (decoded.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE))
      throw Error(ErrorKind::unsupported,
                  fmt::format("codec {}: {} bytes exceed Blosc's largest buffer", name_, decoded.size()));
    encoded.resize(decoded.size() + BLOSC_MAX_OVERHEAD);
    const int written = blosc_compress_ctx(settings_.clevel, settings_.shuffle, settings_.typesize, decoded.size(),
                                           decoded.data(), encoded.data(), encoded.size(),
                                           settings_.compressor.c_str(), settings_.blocksize, kInternalThreads);
    if (written <= 0)
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: compression failed ({})", name_, written));
    encoded.resize(static_cast<std::size_t>(written));
  }

  // The largest stored chunk: the largest frame, plus the bytes a writer may leave after it.
  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override {
    return decoded_size + BLOSC_MAX_OVERHEAD + kTrailingBytesAllowed;
  }
 private:
  // The Blosc frame at the front of a stored chunk, as long as its header says (bytes after it are
  // ignored, as numcodecs ignores them); a chunk shorter than its header says is corrupt.
  ByteSpan checked_frame(ByteSpan encoded) const {
    if (encoded.size() < BLOSC_MIN_HEADER_LENGTH)
      throw_corrupt(name_, fmt::format("{} bytes cannot hold the {}-byte Blosc header", encoded.size(),
                                       BLOSC_MIN_HEADER_LENGTH));
    std::size_t claimed = 0, compressed = 0, blocksize = 0;
    blosc_cbuffer_sizes(encoded.data(), &claimed, &compressed, &blocksize);
    if (compressed > encoded.size())
      throw_corrupt(name_, fmt::format("header says the chunk is {} bytes, it is only {}", compressed, encoded.size()));
    if (compressed < BLOSC_MIN_HEADER_LENGTH)
      throw_corrupt(name_, fmt::format("header says the chunk is {} bytes, less than its own header", compressed));
    return encoded.first(compressed);
  }

  // The size the header claims, after checking the header against the frame: checked before
  // anything is allocated for the claim.
  std::size_t checked_claim(ByteSpan encoded, std::uint64_t max_decoded_size) const {
    std::size_t claimed = 0, compressed = 0, blocksize = 0;
    blosc_cbuffer_sizes(encoded.data(), &claimed, &compressed, &blocksize);
    if (claimed > max_decoded_size)
      throw_corrupt(name_, fmt::format("header claims {} bytes, more than the {} this chunk can hold", claimed,
                                       max_decoded_size));
    std::size_t validated = 0;
    if (blosc_cbuffer_validate(encoded.data(), encoded.size(), &validated) != 0 || validated != claimed)
      throw_corrupt(name_, "invalid Blosc header");
    return claimed;
  }

  // Decompresses into `decoded`, which is exactly the size the (checked) header claims.
  void decompress(ByteSpan encoded, MutableByteSpan decoded) const {
    if (decoded.empty()) return;
    const int written = blosc_decompress_ctx(encoded.data(), decoded.data(), decoded.size(), kInternalThreads);
    if (written <= 0 || static_cast<std::size_t>(written) != decoded.size())
      throw_corrupt(name_, fmt::format("invalid Blosc data (decompression returned {})", written));
  }

  std::string_view name_;
  BloscSettings settings_;
};

std::string read_compressor(const nlohmann::json& configuration, std::string_view name) {
  std::string compressor = configuration.contains("cname") ? require_string(configuration, name, "cname") : "lz4";
  constexpr std::array<std::string_view, 6> kKnown = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
  if (std::find(kKnown.begin(), kKnown.end(), compressor) == kKnown.end())
    throw_bad_config(name, fmt::format("\"cname\" is \"{}\", expected one of {}", compressor, fmt::join(kKnown, ", ")));
  // Decoding reads the compressor from each chunk's header, so a missing one would fail every
  // chunk: say so once, up front.
  if (blosc_compname_to_compcode(compressor.c_str()) < 0)
    throw Error(ErrorKind::unsupported, fmt::format("codec {}: this Blosc library lacks the {} compressor (it has {})",
                                                    name, compressor, blosc_list_compressors()));
  return compressor;
}

int read_clevel(const nlohmann::json& configuration, std::string_view name) {
  if (!configuration.contains("clevel")) return 5;
  const std::int64_t clevel = require_integer(configuration, name, "clevel");
  if (clevel < 0 || clevel > 9) throw_bad_config(name, fmt::format("\"clevel\" is {}, expected 0 to 9", clevel));
  return static_cast<int>(clevel);
}

std::size_t read_size(const nlohmann::json& configuration, std::string_view name, std::string_view field,
                      std::size_t fallback, std::int64_t smallest) {
  if (!configuration.contains(field)) return fallback;
  const std::int64_t value = require_integer(configuration, name, field);
  if (value < smallest) throw_bad_config(name, fmt::format("\"{}\" is {}, expected at least {}", field, value, smallest));
  return static_cast<std::size_t>(value);
}

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_blosc_codec(const nlohmann::json& configuration, const ArraySpec& decoded) {
  constexpr std::string_view name = "blosc";
  BloscSettings settings;
  settings.compressor = read_compressor(configuration, name);
  settings.clevel = read_clevel(configuration, name);
  const std::string shuffle = configuration.contains("shuffle") ? require_string(configuration, name, "shuffle")
                                                                : std::string("noshuffle");
  if (shuffle == "noshuffle") settings.shuffle = BLOSC_NOSHUFFLE;
  else if (shuffle == "shuffle") settings.shuffle = BLOSC_SHUFFLE;
  else if (shuffle == "bitshuffle") settings.shuffle = BLOSC_BITSHUFFLE;
  else throw_bad_config(name, fmt::format("\"shuffle\" is \"{}\", expected noshuffle, shuffle or bitshuffle", shuffle));
  settings.typesize = read_size(configuration, name, "typesize", decoded.dtype.size, 1);
  settings.blocksize = read_size(configuration, name, "blocksize", 0, 0);
  return std::make_unique<BloscCodec>(name, std::move(settings));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_blosc_codec(const nlohmann::json& configuration,
                                                              const ArraySpec& decoded) {
  constexpr std::string_view name = "numcodecs.blosc";
  BloscSettings settings;
  settings.compressor = read_compressor(configuration, name);
  settings.clevel = read_clevel(configuration, name);
  // numcodecs takes the type size from the array it compresses: the chunk after any filters.
  settings.typesize = read_size(configuration, name, "typesize", decoded.dtype.size, 1);
  settings.blocksize = read_size(configuration, name, "blocksize", 0, 0);
  const std::int64_t shuffle = configuration.contains("shuffle") ? require_integer(configuration, name, "shuffle") : 1;
  constexpr std::int64_t kAutoShuffle = -1;
  if (shuffle == kAutoShuffle) {
    // numcodecs' AUTOSHUFFLE: bits of single bytes, bytes of anything wider.
    settings.shuffle = settings.typesize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
  } else if (shuffle >= BLOSC_NOSHUFFLE && shuffle <= BLOSC_BITSHUFFLE) {
    settings.shuffle = static_cast<int>(shuffle);
  } else {
    throw_bad_config(name, fmt::format("\"shuffle\" is {}, expected -1 (auto), 0, 1 or 2", shuffle));
  }
  return std::make_unique<BloscCodec>(name, std::move(settings));
}

}  // namespace zarrdirect::codec
