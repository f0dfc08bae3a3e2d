"""Several processes writing one sharded array at once, and writes that fail midway.

Every write here covers only part of each shard it touches, so each is a read-modify-write of
the shard under its key's lock (an OS file lock shared by processes): the stress test checks that
no process's update is lost, and a reader running meanwhile checks that no shard is ever seen
torn (every value it reads is one some writer wrote, never an error)."""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np
import pytest

import zarrdirect

SHAPE = (40, 60, 48)
SHARDS = (20, 30, 48)   # 2 x 2 x 1 shards
CHUNKS = (10, 10, 8)    # 2 x 3 x 6 inner chunks per shard
PROCESSES = 4
SLAB = 2                # each write: 2 planes along the last axis, across every shard
OFFSET = 1_000_000      # the first round writes value + OFFSET, the second the value itself


def final_values() -> np.ndarray:
    return np.arange(1, np.prod(SHAPE) + 1, dtype=np.uint32).reshape(SHAPE)


def codec_list(index_location: str) -> list:
    return [{"name": "sharding_indexed",
             "configuration": {"chunk_shape": list(CHUNKS),
                               "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                          {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
                               "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                {"name": "crc32c"}],
                               "index_location": index_location}}]


def writer(path: str, process: int, errors) -> None:
    try:
        array = zarrdirect.open(path, mode="r+")
        values = final_values()
        # Planes [x, x + SLAB) belong to process (x // SLAB) % PROCESSES: neighbouring slabs of
        # one inner chunk and of every shard belong to different processes.
        for round_offset in (OFFSET, 0):
            for x in range(process * SLAB, SHAPE[2], SLAB * PROCESSES):
                region = (slice(None), slice(None), slice(x, x + SLAB))
                array.write(values[region] + np.uint32(round_offset), region, threads=1)
    except BaseException as error:  # reported to the parent, which fails the test
        errors.put(f"writer {process}: {error!r}")


def reader(path: str, done, errors, reads) -> None:
    try:
        values = final_values()
        count = 0
        while True:
            finished = done.is_set()
            got = zarrdirect.open(path)[...]
            ok = (got == 0) | (got == values) | (got == values + OFFSET)
            if not ok.all():
                errors.put(f"reader: {int((~ok).sum())} values that no writer wrote")
                return
            count += 1
            if finished:
                break
        reads.value = count
    except BaseException as error:
        errors.put(f"reader: {error!r}")


@pytest.mark.parametrize("index_location", ["end", "start"])
def test_processes_writing_shared_shards_lose_nothing(tmp_path, index_location):
    path = str(tmp_path / "a")
    zarrdirect.create(path, shape=SHAPE, dtype="uint32", chunks=SHARDS, codec=codec_list(index_location))
    # Spawned, not forked: the parent's worker threads must not be copied into the children.
    context = mp.get_context("spawn")
    errors = context.Queue()
    done = context.Event()
    reads = context.Value("i", 0)
    watcher = context.Process(target=reader, args=(path, done, errors, reads))
    watcher.start()
    writers = [context.Process(target=writer, args=(path, p, errors)) for p in range(PROCESSES)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=120)
    done.set()
    watcher.join(timeout=120)
    messages = []
    while not errors.empty():
        messages.append(errors.get())
    assert not messages, messages
    assert all(p.exitcode == 0 for p in writers + [watcher])
    assert reads.value >= 1

    got = zarrdirect.open(path)[...]
    expected = final_values()
    lost = np.argwhere(got != expected)
    assert lost.size == 0, f"{len(lost)} values lost, first at {tuple(lost[0])}: {got[tuple(lost[0])]}"
    names = [name for _, _, files in os.walk(path) for name in files]
    assert not [name for name in names if name.endswith(".__lock")], names


def test_a_write_failing_midway_leaves_each_shard_old_or_new(tmp_path):
    path = tmp_path / "a"
    array = zarrdirect.create(path, shape=SHAPE, dtype="uint32", chunks=CHUNKS, shards=SHARDS, codec="zstd:1")
    old = final_values()
    array[...] = old
    new = old + np.uint32(OFFSET)
    # Damage the index checksum of the third shard of four: one thread takes the shards in order,
    # so the write lands in the first two, fails at the third and stops.
    damaged = path / "c" / "1" / "0" / "0"
    stored = bytearray(damaged.read_bytes())
    stored[-1] ^= 0xFF
    damaged.write_bytes(bytes(stored))
    region = (slice(5, 35), slice(None), slice(None))  # part of every shard
    with pytest.raises(zarrdirect.CorruptDataError, match="c/1/0/0"):
        array.write(new[region], region, threads=1)
    assert damaged.read_bytes() == bytes(stored)

    got = {}
    reread = zarrdirect.open(path)
    for sy in range(0, SHAPE[0], SHARDS[0]):
        for sx in range(0, SHAPE[1], SHARDS[1]):
            if (sy, sx) == (SHARDS[0], 0):
                continue  # the damaged shard, unchanged (checked above)
            box = (slice(sy, sy + SHARDS[0]), slice(sx, sx + SHARDS[1]), slice(None))
            rows = slice(max(sy, 5), min(sy + SHARDS[0], 35))
            got[(sy, sx)] = reread[box]
            expected_new = old[box].copy()
            expected_new[rows.start - sy:rows.stop - sy] = new[rows, box[1]]
            landed = (sy, sx) < (SHARDS[0], 0)  # the shards before the damaged one
            np.testing.assert_array_equal(got[(sy, sx)], expected_new if landed else old[box])
    names = [name for _, _, files in os.walk(path) for name in files]
    assert not [name for name in names if name.endswith(".__lock")], names


# A child process that writes `new` over the array at `path` under a file-size limit of `limit`
# bytes (RLIMIT_FSIZE, with SIGXFSZ ignored, so a pwrite past the limit fails with EFBIG as it
# would on a full disk), and prints the error it got.
DISK_FULL_CHILD = """
import resource, signal, sys
import numpy as np
import zarrdirect
path, limit, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
new = np.load(sys.argv[4])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    zarrdirect.open(path, mode="r+").write(new, threads=threads)
except zarrdirect.ZarrdirectError as error:
    print(type(error).__name__, error)
    sys.exit(3)
print("no error")
"""


def write_past_a_file_size_limit(tmp_path, path, new: np.ndarray, limit: int, threads: int) -> str:
    import subprocess
    import sys

    source = tmp_path / "new.npy"
    np.save(source, new)
    done = subprocess.run([sys.executable, "-c", DISK_FULL_CHILD, str(path), str(limit), str(threads), str(source)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    return done.stdout


def files_of(path) -> dict:
    return {os.path.relpath(os.path.join(folder, name), path): open(os.path.join(folder, name), "rb").read()
            for folder, _, names in os.walk(path) for name in names}


# Noise compresses to more than the limit, a constant to a few bytes: chunks of noise cannot be
# written, constant ones can.
def noise_and_constant_blocks(shape, block, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    noisy = np.zeros(shape, dtype=bool)
    for by in range(0, shape[0], block[0]):
        for bx in range(0, shape[1], block[1]):
            noisy[by:by + block[0], bx:bx + block[1]] = ((by // block[0]) + (bx // block[1])) % 2 == 0
    values = np.where(noisy, rng.integers(0, 65535, size=shape, dtype=np.uint16), np.uint16(7))
    return values, noisy


@pytest.mark.parametrize("threads", [1, 4])
def test_a_disk_full_midway_leaves_each_chunk_old_or_new_and_says_so(tmp_path, threads):
    shape, chunks = (64, 96), (16, 16)
    path = tmp_path / "a"
    array = zarrdirect.create(path, shape=shape, dtype="uint16", chunks=chunks, codec="zstd:1")
    old = np.arange(np.prod(shape), dtype=np.uint16).reshape(shape)
    array[...] = old
    new, noisy = noise_and_constant_blocks(shape, chunks, seed=1)
    message = write_past_a_file_size_limit(tmp_path, path, new, limit=200, threads=threads)
    assert "File too large" in message and "write of region" in message, message

    got = zarrdirect.open(path)[...]
    landed = 0
    for cy in range(0, shape[0], chunks[0]):
        for cx in range(0, shape[1], chunks[1]):
            box = (slice(cy, cy + chunks[0]), slice(cx, cx + chunks[1]))
            if noisy[box].all():  # 512 bytes of noise cannot fit in 200: the old chunk stays
                np.testing.assert_array_equal(got[box], old[box])
            elif np.array_equal(got[box], new[box]):
                landed += 1
            else:
                np.testing.assert_array_equal(got[box], old[box])
    if threads == 1:
        # One thread goes through the chunks in order and stops at the first failure (chunk 0 is
        # noise), so nothing lands.
        assert landed == 0
    leftovers = [name for name in files_of(path) if name.endswith(".__lock")]
    assert not leftovers, leftovers


def test_a_disk_full_inside_a_sharded_write_leaves_the_shards_as_they_were(tmp_path):
    shape, shards, chunks = (64, 64), (32, 32), (8, 8)
    path = tmp_path / "a"
    array = zarrdirect.create(path, shape=shape, dtype="uint16", chunks=chunks, shards=shards, codec="zstd:1")
    array[...] = np.full(shape, 5, dtype=np.uint16)  # a few bytes an inner chunk
    before = files_of(path)
    # Every new shard holds noise and grows past the limit, which each old shard is well within.
    largest = max(len(contents) for name, contents in before.items() if name.startswith("c"))
    new = np.random.default_rng(2).integers(0, 65535, size=shape, dtype=np.uint16)
    message = write_past_a_file_size_limit(tmp_path, path, new, limit=largest + 64, threads=2)
    assert "File too large" in message, message
    assert files_of(path) == before
