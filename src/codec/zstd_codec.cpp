#include "codec/zstd_codec.hpp"

#include <algorithm>
#include <new>

#include <fmt/format.h>
// The bufferless block-by-block calls (ZSTD_decompressBegin, ZSTD_decompressContinue) that let a
// prefix decode stop between blocks: exported by the shared library, declared as static-only.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>


namespace zarrdirect::codec {
namespace {

// Creating a zstd context allocates a few hundred KiB; each thread keeps one for every chunk it
// decodes or encodes instead.
ZSTD_DCtx* thread_decompression_context() {
  thread_local const std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (!context) throw std::bad_alloc();
  return context.get();
}

ZSTD_CCtx* thread_compression_context() {
  thread_local const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (!context) throw std::bad_alloc();
  return context.get();
}

// What the frames in a chunk say about the size they decode to.
struct FrameSurvey {
  std::uint64_t declared_size = 0;  // sum over the frames that declare their size
  bool all_declared = true;
  bool any_checksum = false;        // some frame carries a content checksum (RFC 8878, 3.1.1.1.1)
};

constexpr std::uint32_t kZstdMagic = 0xFD2FB528;

class ZstdCodec final : public BytesToBytesCodec {
 public:
  ZstdCodec(std::string_view name, int level, bool checksum) : name_(name), level_(level), checksum_(checksum) {}
  std::string_view name() const override { return name_; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    FrameSurvey survey = survey_frames(encoded, max_decoded_size);
    ZSTD_DCtx* context = thread_decompression_context();
    ZSTD_DCtx_reset(context, ZSTD_reset_session_only);  // a failed chunk may have left a frame half done
    if (survey.all_declared) {
      decode_declared(context, encoded, decoded, survey.declared_size);
      return;
    }
    decoded.resize(static_cast<std::size_t>(max_decoded_size));
    decoded.resize(decode_undeclared(context, encoded, decoded));
  }

  bool decode_exact(ByteSpan encoded, MutableByteSpan decoded) const override {
    FrameSurvey survey = survey_frames(encoded, decoded.size());
    if (survey.all_declared && survey.declared_size != decoded.size()) return false;
    ZSTD_DCtx* context = thread_decompression_context();
    ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
    const std::size_t written = decode_undeclared(context, encoded, decoded);
    if (written != decoded.size())
      throw_corrupt(name_, survey.all_declared
                               ? fmt::format("frames declare {} bytes but decode to {}", decoded.size(), written)
                               : fmt::format("decodes to {} bytes, the chunk holds {}", written, decoded.size()));
    return true;
  }

  // Decodes block after block straight into `decoded` (zstd's bufferless API: the blocks before
  // are the window, in place) and stops at the first block boundary past `needed`: the blocks
  // after it are never decoded. A frame with a content checksum is left to decode(), which
  // verifies it over the whole frame.
  bool decode_prefix(ByteSpan encoded, MutableByteSpan decoded, std::size_t needed) const override {
    const FrameSurvey survey = survey_frames(encoded, decoded.size());
    if (survey.any_checksum) return false;
    if (needed == 0) return true;
    ZSTD_DCtx* context = thread_decompression_context();
    ZSTD_DCtx_reset(context, ZSTD_reset_session_only);
    check_decode(ZSTD_decompressBegin(context));
    std::size_t in = 0;
    std::size_t out = 0;
    while (out < needed) {
      std::size_t step = ZSTD_nextSrcSizeToDecompress(context);
      if (step == 0) {  // a frame ended: the next one starts, or the chunk is done
        if (in == encoded.size()) break;
        check_decode(ZSTD_decompressBegin(context));
        step = ZSTD_nextSrcSizeToDecompress(context);
      }
      if (step > encoded.size() - in)
        throw_corrupt(name_, fmt::format("a frame needs {} more bytes at byte {} of {}", step, in, encoded.size()));
      const std::size_t written =
          ZSTD_decompressContinue(context, decoded.data() + out, decoded.size() - out, encoded.data() + in, step);
      if (ZSTD_getErrorCode(written) == ZSTD_error_dstSize_tooSmall)
        throw_corrupt(name_, fmt::format("decodes to more than the {} bytes this chunk can hold", decoded.size()));
      check_decode(written);
      in += step;
      out += written;
    }
    if (out < needed)
      throw_corrupt(name_, fmt::format("decodes to {} bytes, fewer than the {} asked of this chunk", out, needed));
    return true;
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    ZSTD_CCtx* context = thread_compression_context();
    ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters);
    check_encode(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level_));
    check_encode(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum_ ? 1 : 0));
    encoded.resize(ZSTD_compressBound(decoded.size()));
    std::size_t size = ZSTD_compress2(context, encoded.data(), encoded.size(), decoded.data(), decoded.size());
    check_encode(size);
    encoded.resize(size);
  }

  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override {
    return ZSTD_compressBound(static_cast<std::size_t>(decoded_size));
  }

 private:
  // Walks the frames without decoding them: a truncated frame, trailing garbage or a size claim
  // beyond the chunk fails here, before anything is allocated.
  FrameSurvey survey_frames(ByteSpan encoded, std::uint64_t max_decoded_size) const {
    if (encoded.empty()) throw_corrupt(name_, "empty input holds no zstd frame");
    FrameSurvey survey;
    std::size_t offset = 0;
    while (offset < encoded.size()) {
      const void* frame = encoded.data() + offset;
      const std::size_t available = encoded.size() - offset;
      const std::size_t frame_size = ZSTD_findFrameCompressedSize(frame, available);
      if (ZSTD_isError(frame_size))
        throw_corrupt(name_, fmt::format("no valid frame at byte {} of {}: {}", offset, encoded.size(),
                                         ZSTD_getErrorName(frame_size)));
      // The frame header descriptor follows the magic number; bit 2 is the content checksum
      // flag (skippable frames have another magic and no checksum).
      std::uint32_t magic = 0;
      if (available >= 5) {
        for (int b = 3; b >= 0; --b) magic = (magic << 8) | std::to_integer<std::uint32_t>(encoded[offset + b]);
        if (magic == kZstdMagic && (std::to_integer<unsigned>(encoded[offset + 4]) & 0x04u) != 0)
          survey.any_checksum = true;
      }
      const unsigned long long content = ZSTD_getFrameContentSize(frame, available);
      if (content == ZSTD_CONTENTSIZE_ERROR)
        throw_corrupt(name_, fmt::format("frame at byte {} has an invalid header", offset));
      if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
        survey.all_declared = false;
      } else {
        if (content > max_decoded_size - survey.declared_size)
          throw_corrupt(name_, fmt::format("frames claim more than the {} bytes this chunk can hold (frame at byte "
                                           "{} claims {})",
                                           max_decoded_size, offset, content));
        survey.declared_size += content;
      }
      offset += frame_size;
    }
    return survey;
  }

  // Every frame declared its size and the total fits: one exact allocation, one call.
  void decode_declared(ZSTD_DCtx* context, ByteSpan encoded, ByteBuffer& decoded, std::uint64_t size) const {
    decoded.resize(static_cast<std::size_t>(size));
    std::size_t written =
        ZSTD_decompressDCtx(context, decoded.data(), decoded.size(), encoded.data(), encoded.size());
    if (ZSTD_isError(written)) throw_corrupt(name_, ZSTD_getErrorName(written));
    if (written != size)
      throw_corrupt(name_, fmt::format("frames declare {} bytes but decode to {}", size, written));
  }

  // Some frame does not declare its size (streaming writers). One-shot decoding into a buffer of
  // the most the chunk can hold uses that buffer as its window; a streaming decoder would reserve
  // the window the frame header asks for (up to 128 MiB, whatever the chunk's size). Returns the
  // bytes written.
  std::size_t decode_undeclared(ZSTD_DCtx* context, ByteSpan encoded, MutableByteSpan out) const {
    const std::size_t written = ZSTD_decompressDCtx(context, out.data(), out.size(), encoded.data(), encoded.size());
    if (ZSTD_getErrorCode(written) == ZSTD_error_dstSize_tooSmall)
      throw_corrupt(name_, fmt::format("decodes to more than the {} bytes this chunk can hold", out.size()));
    if (ZSTD_isError(written)) throw_corrupt(name_, ZSTD_getErrorName(written));
    return written;
  }

  void check_decode(std::size_t result) const {
    if (ZSTD_isError(result)) throw_corrupt(name_, ZSTD_getErrorName(result));
  }

  void check_encode(std::size_t result) const {
    if (ZSTD_isError(result))
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: compression failed: {}", name_,
                                                           ZSTD_getErrorName(result)));
  }

  std::string_view name_;
  int level_;
  bool checksum_;
};

int read_level(const nlohmann::json& configuration, std::string_view name, int default_level) {
  if (!configuration.contains("level")) return default_level;
  const std::int64_t level = require_integer(configuration, name, "level");
  // The level only matters when encoding, and libzstd clamps it to its range: data written with
  // an out-of-range level is valid, so clamp rather than refuse the array.
  return static_cast<int>(std::clamp<std::int64_t>(level, ZSTD_minCLevel(), ZSTD_maxCLevel()));
}

bool read_checksum(const nlohmann::json& configuration, std::string_view name) {
  auto it = configuration.find("checksum");
  if (it == configuration.end()) return false;
  if (!it->is_boolean()) throw_bad_config(name, "\"checksum\" must be true or false");
  return it->get<bool>();
}

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_zstd_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view name = "zstd";
  // Level 0 asks libzstd for its default level.
  return std::make_unique<ZstdCodec>(name, read_level(configuration, name, 0), read_checksum(configuration, name));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_zstd_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view name = "numcodecs.zstd";
  // numcodecs.Zstd() defaults to level 1.
  return std::make_unique<ZstdCodec>(name, read_level(configuration, name, 1), read_checksum(configuration, name));
}

}  // namespace zarrdirect::codec
