#include "codec/deflate_stream.hpp"

#include <algorithm>
#include <limits>
#include <new>

#include <fmt/format.h>
#include <zlib.h>

#include "codec/bounded_output.hpp"

namespace zarrdirect::codec {
namespace {

constexpr int kMaxWindowBits = 15;
// zlib selects the wrapper through the window bits: plain for zlib, +16 for gzip.
int window_bits(DeflateWrapper wrapper) { return wrapper == DeflateWrapper::gzip ? kMaxWindowBits + 16 : kMaxWindowBits; }

// zlib counts bytes in `uInt`; larger buffers go through in slices of this size.
constexpr std::size_t kLargestSlice = std::numeric_limits<uInt>::max();

// One inflate state per thread, reset for each chunk: inflateInit allocates the 32 KiB window and
// the decoder state, which would otherwise happen for every chunk.
class ThreadInflater {
 public:
  ~ThreadInflater() {
    if (ready_) inflateEnd(&stream_);
  }
  z_stream& start(DeflateWrapper wrapper) {
    const int rc = ready_ ? inflateReset2(&stream_, window_bits(wrapper)) : inflateInit2(&stream_, window_bits(wrapper));
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK) throw Error(ErrorKind::invalid_argument, fmt::format("zlib inflate setup failed ({})", rc));
    ready_ = true;
    return stream_;
  }

 private:
  z_stream stream_{};
  bool ready_ = false;
};

// Input handed to zlib in slices it can count.
class InputFeeder {
 public:
  // Starts from nothing handed over: a reused stream may still point into a previous chunk.
  InputFeeder(z_stream& stream, ByteSpan input) : stream_(stream), input_(input) {
    stream_.next_in = nullptr;
    stream_.avail_in = 0;
  }
  void refill() {
    if (stream_.avail_in != 0 || handed_ == input_.size()) return;
    const std::size_t slice = std::min(input_.size() - handed_, kLargestSlice);
    // zlib's next_in is not const-qualified in older headers; it never writes through it.
    stream_.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(input_.data() + handed_));
    stream_.avail_in = static_cast<uInt>(slice);
    handed_ += slice;
  }
  // Input bytes zlib has not consumed yet.
  ByteSpan rest() const { return input_.subspan(handed_ - stream_.avail_in); }

 private:
  z_stream& stream_;
  ByteSpan input_;
  std::size_t handed_ = 0;
};

bool starts_gzip_member(ByteSpan bytes) {
  return bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b};
}

// gzip(1) and Python's gzip reader skip zero bytes padding a file after its last member.
bool all_zero(ByteSpan bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

namespace {

// Output into a caller's span of the exact decoded size. When the span is full, one spill byte
// is offered: filling it proves the stream holds more than the chunk.
class ExactOutput {
 public:
  explicit ExactOutput(MutableByteSpan target) : target_(target) {}
  MutableByteSpan free_space() {
    if (produced_ < target_.size()) return target_.subspan(produced_);
    return MutableByteSpan(&spill_, 1);
  }
  void commit(std::size_t count) { produced_ += count; }
  bool exceeded() const { return produced_ > target_.size(); }
  std::uint64_t limit() const { return target_.size(); }
  std::size_t produced() const { return produced_; }
  void finish() {}

 private:
  MutableByteSpan target_;
  std::byte spill_{};
  std::size_t produced_ = 0;
};

// The inflate loop over any output with BoundedOutput's interface.
template <typename Output>
void inflate_into(std::string_view codec, DeflateWrapper wrapper, ByteSpan encoded, Output& output) {
  thread_local ThreadInflater inflater;
  z_stream& stream = inflater.start(wrapper);
  InputFeeder input(stream, encoded);
  for (;;) {
    input.refill();
    MutableByteSpan space = output.free_space();
    const std::size_t offered = std::min(space.size(), kLargestSlice);
    stream.next_out = reinterpret_cast<Bytef*>(space.data());
    stream.avail_out = static_cast<uInt>(offered);
    const int rc = inflate(&stream, Z_NO_FLUSH);
    output.commit(offered - stream.avail_out);
    if (output.exceeded())
      throw_corrupt(codec, fmt::format("decodes to more than the {} bytes this chunk can hold", output.limit()));
    if (rc == Z_STREAM_END) {
      input.refill();
      ByteSpan rest = input.rest();
      if (wrapper == DeflateWrapper::gzip && starts_gzip_member(rest)) {
        inflateReset(&stream);  // the next member; the unconsumed input stays in place
        continue;
      }
      if (!rest.empty() && !(wrapper == DeflateWrapper::gzip && all_zero(rest)))
        throw_corrupt(codec, fmt::format("{} bytes of garbage follow the end of the stream", rest.size()));
      break;
    }
    if (rc == Z_NEED_DICT) throw_corrupt(codec, "the stream needs a preset dictionary, which Zarr never uses");
    if (rc == Z_DATA_ERROR) throw_corrupt(codec, stream.msg ? stream.msg : "invalid deflate data");
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw_corrupt(codec, fmt::format("inflate failed ({})", rc));
    // Z_OK or Z_BUF_ERROR: with every input byte consumed and room left, no more output can come.
    input.refill();
    if (stream.avail_in == 0 && stream.avail_out > 0) throw_corrupt(codec, "the stream is truncated");
  }
  output.finish();
}

}  // namespace

void inflate_bounded(std::string_view codec, DeflateWrapper wrapper, ByteSpan encoded, ByteBuffer& decoded,
                     std::uint64_t max_decoded_size) {
  BoundedOutput output(decoded, max_decoded_size, encoded.size());
  inflate_into(codec, wrapper, encoded, output);
}

void inflate_exact(std::string_view codec, DeflateWrapper wrapper, ByteSpan encoded, MutableByteSpan decoded) {
  ExactOutput output(decoded);
  inflate_into(codec, wrapper, encoded, output);
  // The stream ended (a longer one has thrown): a shorter one would leave the chunk partly unwritten.
  if (output.produced() != decoded.size())
    throw_corrupt(codec, fmt::format("decodes to {} bytes, the chunk holds {}", output.produced(), decoded.size()));
}

void deflate_whole(std::string_view codec, DeflateWrapper wrapper, int level, ByteSpan decoded, ByteBuffer& encoded) {
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, window_bits(wrapper), 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: deflate setup failed", codec));
  // Released on every path, the exceptional ones included.
  const std::unique_ptr<z_stream, decltype(&deflateEnd)> guard(&stream, &deflateEnd);
  encoded.resize(static_cast<std::size_t>(deflate_bound(wrapper, decoded.size())));
  InputFeeder input(stream, decoded);
  std::size_t written = 0;
  for (;;) {
    input.refill();
    const std::size_t offered = std::min(encoded.size() - written, kLargestSlice);
    stream.next_out = reinterpret_cast<Bytef*>(encoded.data() + written);
    stream.avail_out = static_cast<uInt>(offered);
    const bool last_input = input.rest().size() == stream.avail_in;
    const int rc = deflate(&stream, last_input ? Z_FINISH : Z_NO_FLUSH);
    written += offered - stream.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: deflate failed ({})", codec, rc));
    if (written == encoded.size())
      throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: output passed deflate's bound", codec));
  }
  encoded.resize(written);
}

std::uint64_t deflate_bound(DeflateWrapper wrapper, std::uint64_t decoded_size) {
  // compressBound covers the zlib wrapper's 6 bytes. A gzip header is 10 bytes and its trailer 8,
  // and other writers may add optional header fields (a file name, a comment): allow 1 KiB.
  constexpr std::uint64_t kGzipHeaderSlack = 1024;
  std::uint64_t bound = compressBound(static_cast<uLong>(decoded_size));
  return wrapper == DeflateWrapper::gzip ? bound + kGzipHeaderSlack : bound;
}

int read_deflate_level(const nlohmann::json& configuration, std::string_view codec, int default_level) {
  if (!configuration.contains("level")) return default_level;
  const std::int64_t level = require_integer(configuration, codec, "level");
  if (level < -1 || level > 9) throw_bad_config(codec, fmt::format("\"level\" is {}, expected 0 to 9", level));
  return static_cast<int>(level);
}

}  // namespace zarrdirect::codec
