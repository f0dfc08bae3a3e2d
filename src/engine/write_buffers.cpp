#include "engine/write_buffers.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace zarrdirect {
namespace {

// Idle sets beyond these are freed: enough for a write on every thread of a large machine, and
// no more memory than a few chunks per thread.
constexpr std::size_t kMaxIdleSets = 256;
constexpr std::size_t kMaxIdleBytes = std::size_t{1} << 30;

struct Pool {
  std::mutex mutex;
  std::vector<std::unique_ptr<WriteBuffers>> idle;
  std::size_t idle_bytes = 0;
};

Pool& pool() {
  static Pool* instance = new Pool();  // never destroyed: writes may run during static teardown
  return *instance;
}

}  // namespace

std::size_t WriteBuffers::capacity() const {
  return chunk.capacity() + file.capacity() + scratch.a.capacity() + scratch.b.capacity() + scratch.c.capacity() +
         encode_a.capacity() + encode_b.capacity();
}

std::vector<std::unique_ptr<WriteBuffers>> take_write_buffers(std::size_t count) {
  std::vector<std::unique_ptr<WriteBuffers>> out;
  out.reserve(count);
  {
    std::lock_guard lock(pool().mutex);
    auto& idle = pool().idle;
    while (out.size() < count && !idle.empty()) {
      pool().idle_bytes -= idle.back()->capacity();
      out.push_back(std::move(idle.back()));
      idle.pop_back();
    }
  }
  while (out.size() < count) out.push_back(std::make_unique<WriteBuffers>());
  return out;
}

void give_back_write_buffers(std::vector<std::unique_ptr<WriteBuffers>> buffers) {
  std::lock_guard lock(pool().mutex);
  for (auto& set : buffers) {
    if (!set) continue;
    const std::size_t bytes = set->capacity();
    if (pool().idle.size() >= kMaxIdleSets || pool().idle_bytes + bytes > kMaxIdleBytes) continue;  // freed
    pool().idle_bytes += bytes;
    pool().idle.push_back(std::move(set));
  }
}

std::size_t idle_write_buffer_bytes() {
  std::lock_guard lock(pool().mutex);
  return pool().idle_bytes;
}

Encoded encode_chunk(const codec::CodecChain& chain, std::span<const std::byte> decoded, codec::ByteBuffer& a,
                     codec::ByteBuffer& b) {
  Encoded current{decoded, nullptr};
  codec::ByteBuffer* next = &a;
  auto advance = [&] {
    current = {std::span<const std::byte>(*next), next};
    next = next == &a ? &b : &a;
  };
  for (const auto& codec : chain.array_to_array()) {
    next->resize(static_cast<std::size_t>(codec->encoded_spec().nbytes()));
    codec->encode(current.bytes, *next);
    advance();
  }
  if (!chain.array_to_bytes().is_identity()) {
    chain.array_to_bytes().encode(current.bytes, *next);
    advance();
  }
  for (const auto& codec : chain.bytes_to_bytes()) {
    codec->encode(current.bytes, *next);
    advance();
  }
  return current;
}

bool all_fill(std::span<const std::byte> chunk, std::span<const std::byte> fill) {
  const std::size_t size = fill.size();
  if (size == 0 || chunk.size() < size) return true;
  if (std::memcmp(chunk.data(), fill.data(), size) != 0) return false;
  // Every element equals the first one exactly when the chunk equals itself moved by one
  // element: one memcmp (vectorized, stops at the first difference) instead of a loop.
  return std::memcmp(chunk.data(), chunk.data() + size, chunk.size() - size) == 0;
}

void fill_with(std::span<std::byte> chunk, std::span<const std::byte> fill) {
  const std::size_t size = fill.size();
  if (size == 0) return;
  if (std::all_of(fill.begin(), fill.end(), [](std::byte b) { return b == std::byte{0}; })) {
    std::memset(chunk.data(), 0, chunk.size());
    return;
  }
  for (std::size_t i = 0; i + size <= chunk.size(); i += size) std::memcpy(chunk.data() + i, fill.data(), size);
}

}  // namespace zarrdirect
