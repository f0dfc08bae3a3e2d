"""Failures map to zarrdirect's exception types, which are also the builtin ones callers catch."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import bz2

import numpy as np
import pytest

import zarrdirect
from conftest import write_v2_array


@pytest.fixture
def small(tmp_path):
    return write_v2_array(tmp_path / "small.zarr", np.arange(100, dtype="<i4").reshape(10, 10), (5, 5), "zlib")


def test_hierarchy() -> None:
    assert issubclass(zarrdirect.InvalidMetadataError, ValueError)
    assert issubclass(zarrdirect.UnsupportedError, NotImplementedError)
    assert issubclass(zarrdirect.CorruptDataError, ValueError)
    assert issubclass(zarrdirect.ZarrIOError, OSError)
    assert issubclass(zarrdirect.NotFoundError, FileNotFoundError)
    assert issubclass(zarrdirect.CudaError, RuntimeError)
    assert issubclass(zarrdirect.InvalidArgumentError, ValueError)
    assert issubclass(zarrdirect.InvalidIndexError, IndexError)
    for name in ("InvalidMetadataError", "UnsupportedError", "CorruptDataError", "ZarrIOError", "NotFoundError",
                 "CudaError", "InvalidArgumentError", "InvalidIndexError", "CancelledError"):
        assert issubclass(getattr(zarrdirect, name), zarrdirect.ZarrdirectError)


def test_bad_json(small) -> None:
    (small / ".zarray").write_text("{ not json")
    with pytest.raises(zarrdirect.InvalidMetadataError, match=r"\.zarray.*not valid JSON"):
        zarrdirect.open(small)


def test_metadata_that_contradicts_the_spec(small) -> None:
    doc = json.loads((small / ".zarray").read_text())
    doc["chunks"] = [0, 5]
    (small / ".zarray").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="chunks"):
        zarrdirect.open(small)


def test_unknown_codec_is_unsupported(small) -> None:
    doc = json.loads((small / ".zarray").read_text())
    doc["compressor"] = {"id": "no-such-codec"}
    (small / ".zarray").write_text(json.dumps(doc))
    with pytest.raises(NotImplementedError, match="no-such-codec") as caught:
        zarrdirect.open(small).read()
    assert isinstance(caught.value, zarrdirect.UnsupportedError)


def test_corrupt_chunk(small) -> None:
    (small / "0.1").write_bytes(b"\x78\x9c this is not zlib")
    array = zarrdirect.open(small)
    with pytest.raises(zarrdirect.CorruptDataError, match=r"0\.1"):
        array.read()
    np.testing.assert_array_equal(array[:5, :5], np.arange(100).reshape(10, 10)[:5, :5])  # others still read


def test_missing_chunks_read_as_fill(small) -> None:
    for name in os.listdir(small):
        if not name.startswith("."):
            os.remove(small / name)
    assert (zarrdirect.open(small).read() == 0).all()


def test_not_found(tmp_path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        zarrdirect.open(tmp_path / "nothing-here")
    assert isinstance(caught.value, zarrdirect.ZarrdirectError) and caught.value.errno == 2
    with pytest.raises(FileNotFoundError, match="no zarr.json"):
        zarrdirect.open(tmp_path)  # a folder, but not an array
    with pytest.raises(FileNotFoundError):
        zarrdirect.open_group(tmp_path / "nothing-here")


def test_a_chunk_that_cannot_be_read(small) -> None:
    os.remove(small / "1.1")
    (small / "1.1").mkdir()  # exists, but reading it fails in the OS
    with pytest.raises((zarrdirect.ZarrIOError, zarrdirect.CorruptDataError)) as caught:
        zarrdirect.open(small).read()
    assert "1.1" in str(caught.value)


def test_group_opened_as_array(tmp_path) -> None:
    (tmp_path / "g.zarr").mkdir()
    (tmp_path / "g.zarr" / ".zgroup").write_text('{"zarr_format": 2}')
    write_v2_array(tmp_path / "g.zarr" / "x", np.zeros(3), (3,))
    with pytest.raises(ValueError, match="open_group"):
        zarrdirect.open(tmp_path / "g.zarr")
    with pytest.raises(zarrdirect.InvalidMetadataError, match="multiscales"):
        zarrdirect.open_multiscale(tmp_path / "g.zarr")
    with pytest.raises(zarrdirect.ZarrdirectError, match="array, not a group"):
        zarrdirect.open_group(tmp_path / "g.zarr" / "x")


def test_bad_arguments(small) -> None:
    array = zarrdirect.open(small)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="device"):
        array.read(device="tpu")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="threads"):
        array.read(threads=0)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="progress"):
        array.read(progress="yes")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="stream"):
        array.read(stream="fast")
    with pytest.raises(zarrdirect.InvalidArgumentError, match=r"shape \(10, 9\)"):
        array.read(out=np.zeros((10, 9), dtype="<i4"))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="dtype"):
        array.read(out=np.zeros((10, 10), dtype="<i8"))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="native byte order"):
        array.read(out=np.zeros((10, 10), dtype=">i4"))
    readonly = np.zeros((10, 10), dtype="<i4")
    readonly.flags.writeable = False
    with pytest.raises(zarrdirect.InvalidArgumentError, match="read-only"):
        array.read(out=readonly)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="NumPy array or a CUDA array"):
        array.read(out=[[0] * 10] * 10)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="device='cuda'"):
        array.read(device="cuda", out=np.zeros((10, 10), dtype="<i4"))


def test_device_reads_without_cuda_are_unsupported(small) -> None:
    if zarrdirect.cuda_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(zarrdirect.ZarrdirectError):
        zarrdirect.open(small).cuda[0]


# --- cancellation --------------------------------------------------------------------------------


CHUNK = np.random.default_rng(7).integers(0, 1000, size=(32, 1024)).astype("<u4")


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    """An array whose read takes long enough (64 bz2 chunks, one thread) to be interrupted half
    way. Every chunk is the same bytes, compressed once: bz2 is as slow to write as to read."""
    path = tmp_path_factory.mktemp("slow") / "slow.zarr"
    write_v2_array(path, CHUNK, CHUNK.shape, "bz2")
    doc = json.loads((path / ".zarray").read_text())
    doc["shape"] = [2048, 1024]
    (path / ".zarray").write_text(json.dumps(doc))
    encoded = bz2.compress(CHUNK.tobytes(), 1)
    for row in range(2048 // CHUNK.shape[0]):
        (path / f"{row}.0").write_bytes(encoded)
    return path


def test_progress_callable_sees_the_read_and_can_cancel(slow) -> None:
    array = zarrdirect.open(slow)
    seen = []
    array.read(threads=2, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (64, 64) and all(t == 64 for _, t in seen)

    with pytest.raises(zarrdirect.CancelledError):
        array.read(threads=1, progress=lambda done, total: False)


def test_an_exception_in_the_progress_callable_stops_the_read(slow) -> None:
    class Stop(Exception):
        pass

    def fail(done, total):
        raise Stop(f"{done}/{total}")

    with pytest.raises(Stop):
        zarrdirect.open(slow).read(threads=1, progress=fail)


def test_ctrl_c_interrupts_a_read(slow) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    array = zarrdirect.open(slow)
    start = time.monotonic()
    array.read(threads=1)
    full = time.monotonic() - start

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
    try:
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            array.read(threads=1)
        interrupted = time.monotonic() - start
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    if full > 0.5:  # on a machine fast enough to finish first, the assertion above still held
        assert interrupted < full
    np.testing.assert_array_equal(array[-2:, :3], CHUNK[-2:, :3])  # the array still reads


def test_progress_true_draws_a_bar(small, capsys) -> None:
    zarrdirect.open(small).read(progress=True)
    err = capsys.readouterr().err
    assert "100.0%" in err and "(4/4 chunks" in err


def test_ctrl_c_stops_a_long_metadata_open(tmp_path) -> None:
    """Parsing has no cancellation point, so an open is abandoned on Ctrl-C: KeyboardInterrupt
    comes at once, not when the parse ends. The document (about 30 MiB of empty lists, the
    costliest shape per byte) takes seconds to open; interrupted, the open must return in well
    under half that."""
    import signal
    import threading
    import time

    group = tmp_path / "g"
    group.mkdir()
    (group / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {"a": ['
                                     + ",".join(["[]"] * 10_000_000) + "]}}")
    started = time.perf_counter()
    zarrdirect.open_group(group)
    whole = time.perf_counter() - started

    timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        zarrdirect.open_group(group)
        time.sleep(whole)  # not reached when the open itself raised
    interrupted = time.perf_counter() - started
    timer.join()
    assert interrupted < whole / 2 + 0.2, (interrupted, whole)
    assert zarrdirect.open_group(group).path == os.fspath(group)  # the next open works


def test_bytes_paths_and_integers_past_cpp_sizes(tmp_path):
    # Paths as bytes open as os.fsdecode names them; thread counts and cache sizes past what a
    # C++ integer holds are capped, not failed as a conversion (pybind11's TypeError).
    import numpy as np
    data = np.arange(10, dtype="u2")
    zarrdirect.save(tmp_path / "a", data, chunks=(4,))
    arr = zarrdirect.open(os.fsencode(tmp_path / "a"))
    np.testing.assert_array_equal(arr.read(threads=2 ** 64), data)
    arr.cache_bytes = 2 ** 64
    assert arr.cache_bytes == 2 ** 63 - 1
    np.testing.assert_array_equal(arr[...], data)
