// What the writer's threads reuse from chunk to chunk and from write to write, and the per-chunk
// steps that use it without allocating: encoding into reused buffers, the all-fill test.
//
// A write's first chunks would otherwise page every buffer in anew (a page fault per 4 KiB on
// first touch, which on the development VM cost more than writing an uncompressed chunk), so
// the buffers go back to a process-wide pool when a write ends.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "codec/codec.hpp"

namespace zarrdirect {

// One thread's buffers. Their capacity only grows, so after the first chunk of a given size
// nothing on the chunk path allocates.
struct WriteBuffers {
  codec::ByteBuffer chunk;  // the decoded chunk being put together
  codec::ByteBuffer file;   // a stored chunk read for a merge
  codec::Scratch scratch;   // decoding it
  codec::ByteBuffer encode_a, encode_b;

  std::size_t capacity() const;
};

// `count` buffer sets, from the pool where it has idle ones. Thread-safe.
std::vector<std::unique_ptr<WriteBuffers>> take_write_buffers(std::size_t count);
// Returns buffer sets to the pool, which keeps up to a bounded number of them and bytes in all
// (the rest are freed). Thread-safe.
void give_back_write_buffers(std::vector<std::unique_ptr<WriteBuffers>> buffers);
// Idle bytes the pool holds, for tests.
std::size_t idle_write_buffer_bytes();

// A chunk's stored bytes: in `owner` (one of the buffers encode_chunk was given), or, when the
// chain stores the array's bytes unchanged, the decoded chunk itself (owner null).
struct Encoded {
  std::span<const std::byte> bytes;
  codec::ByteBuffer* owner = nullptr;
};

// Runs `chain` forwards over `decoded` (C order, native order) with `a` and `b` taking turns as
// the output. The stored bytes equal chain.encode(decoded); a chain that stores the decoded
// bytes as they are (bytes in native order, nothing else) copies nothing. Throws what the codecs
// throw.
Encoded encode_chunk(const codec::CodecChain& chain, std::span<const std::byte> decoded, codec::ByteBuffer& a,
                     codec::ByteBuffer& b);

// True when every element of `chunk` equals `fill` (one element) byte for byte.
bool all_fill(std::span<const std::byte> chunk, std::span<const std::byte> fill);

// Writes `fill` (one element) over every element of `chunk`.
void fill_with(std::span<std::byte> chunk, std::span<const std::byte> fill);

}  // namespace zarrdirect
