"""Partial shard writes update the shard (kept inner chunks stay where they were, new ones are
appended, replaced ones leave unreferenced bytes or holes): the files must stay readable by any
reader of the sharding spec, so here they are decoded independently of zarrdirect, with NumPy
and numcodecs (index at the start or the end, bytes + crc32c, each entry just an offset and a
length), after many updates, and they must not grow without bound."""

from __future__ import annotations

import numpy as np
import pytest

import zarrdirect

# The reference decoder: numcodecs (Debian's python3-numcodecs; the GPU machine lacks it).
Zstd = pytest.importorskip("numcodecs").Zstd

SHAPE = (32, 48)
SHARD = (32, 48)  # one shard
CHUNKS = (8, 8)   # 4 x 6 inner chunks
MISSING = 2**64 - 1


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), bit by bit: the index is small."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def codecs(index_location: str) -> list:
    return [{"name": "sharding_indexed",
             "configuration": {"chunk_shape": list(CHUNKS),
                               "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                          {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
                               "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                {"name": "crc32c"}],
                               "index_location": index_location}}]


def decode_shard(stored: bytes, index_location: str) -> tuple[np.ndarray, int]:
    """The shard's values, and the bytes its entries reference, read as the spec says."""
    grid = (SHARD[0] // CHUNKS[0], SHARD[1] // CHUNKS[1])
    count = grid[0] * grid[1]
    index_size = count * 16 + 4
    raw = stored[:index_size] if index_location == "start" else stored[-index_size:]
    assert int.from_bytes(raw[-4:], "little") == crc32c(raw[:-4]), "index checksum"
    entries = np.frombuffer(raw[:-4], dtype="<u8").reshape(count, 2)
    out = np.zeros(SHARD, dtype="<u2")
    live = 0
    for i, (offset, nbytes) in enumerate(entries.tolist()):
        if offset == MISSING:
            continue
        assert offset + nbytes <= len(stored)
        chunk = np.frombuffer(Zstd().decode(stored[offset:offset + nbytes]), dtype="<u2").reshape(CHUNKS)
        y, x = divmod(i, grid[1])
        out[y * CHUNKS[0]:(y + 1) * CHUNKS[0], x * CHUNKS[1]:(x + 1) * CHUNKS[1]] = chunk
        live += nbytes
    return out, live


@pytest.mark.parametrize("index_location", ["start", "end"])
def test_updated_shards_read_back_by_the_spec_and_stay_bounded(tmp_path, index_location):
    path = tmp_path / "a"
    arr = zarrdirect.create(path, shape=SHAPE, dtype="uint16", chunks=SHARD, codec=codecs(index_location))
    rng = np.random.default_rng(1)
    expected = rng.integers(1, 60000, size=SHAPE, dtype=np.uint16)
    arr[...] = expected
    shard = path / "c" / "0" / "0"
    sizes = [shard.stat().st_size]
    for round_ in range(30):
        # Regions of a few inner chunks, cut across their borders, in several places.
        y = int(rng.integers(0, SHAPE[0] - 10))
        x = int(rng.integers(0, SHAPE[1] - 14))
        block = rng.integers(1, 60000, size=(10, 14), dtype=np.uint16)
        arr[y:y + 10, x:x + 14] = block
        expected[y:y + 10, x:x + 14] = block
        stored = shard.read_bytes()
        values, live = decode_shard(stored, index_location)
        np.testing.assert_array_equal(values, expected, err_msg=f"round {round_}")
        np.testing.assert_array_equal(zarrdirect.open(path)[...], expected)
        # Unreferenced bytes stay at most about as many as the referenced ones (see ShardUpdate).
        assert len(stored) <= 2 * live + 24 * 16 + 4, f"round {round_}: {len(stored)} bytes for {live} live"
        sizes.append(len(stored))
    # Updates appended (the file grew) and compactions happened (it shrank).
    steps = np.diff(sizes)
    assert (steps > 0).any() and (steps < 0).any(), sizes
