"""zarrdirect.dask: from_zarr and to_zarr on the threaded and processes schedulers (the
dask.distributed cluster is in test_dask_distributed.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import zarrdirect

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import zarrdirect.dask as zd  # noqa: E402

from test_pickle import write_ome_image  # noqa: E402

SHAPE = (45, 50, 12)


def source_data(shape=SHAPE, dtype="u2") -> np.ndarray:
    return (np.arange(int(np.prod(shape)), dtype=np.uint64) * 2654435761 % 65521).astype(dtype).reshape(shape)


@pytest.fixture
def sharded(tmp_path):
    expected = source_data()
    zarrdirect.save(tmp_path / "s.zarr", expected, chunks=(5, 10, 6), shards=(15, 20, 12), codec="zstd:1")
    return tmp_path / "s.zarr", expected


def test_blocks_default_to_shards_and_read_the_array(sharded) -> None:
    path, expected = sharded
    x = zd.from_zarr(path)
    assert x.chunks == ((15, 15, 15), (20, 20, 10), (12,))
    assert x.dtype == expected.dtype and type(x._meta) is np.ndarray
    np.testing.assert_array_equal(x.compute(scheduler="threads"), expected)
    np.testing.assert_array_equal(x[3:40, 7, ::5].compute(scheduler="sync"), expected[3:40, 7, ::5])


def test_unsharded_blocks_default_to_whole_chunks_about_the_dask_chunk_size(tmp_path) -> None:
    expected = source_data()
    array = zarrdirect.save(tmp_path / "p.zarr", expected, chunks=(10, 25, 12), codec="raw")
    x = zd.from_zarr(array)  # an Array works as well as its path
    assert x.chunks == tuple((n,) for n in expected.shape)  # the whole array is far below 128 MiB
    chunk_bytes = 10 * 25 * 12 * expected.itemsize
    with dask.config.set({"array.chunk-size": f"{chunk_bytes}B"}):
        assert zd.from_zarr(array).chunks == ((10, 10, 10, 10, 5), (25, 25), (12,))
    with dask.config.set({"array.chunk-size": f"{4 * chunk_bytes}B"}):
        grown = zd.from_zarr(array).chunks
    for sizes, unit in zip(grown, (10, 25, 12)):
        assert all(size % unit == 0 for size in sizes[:-1]), grown  # never splits a chunk
    assert max(np.prod([max(sizes) for sizes in grown]), 0) * expected.itemsize <= 4 * chunk_bytes
    assert sum(len(sizes) for sizes in grown) < 5 + 2 + 1
    np.testing.assert_array_equal(zd.from_zarr(array).compute(), expected)
    # A 4 GiB array of 4 MiB chunks: 32 equal blocks of 128 MiB (Dask's "auto" gives 54 of
    # 384 and 256, the last wave of 16 block reads a third full), not 1,024.
    big = zarrdirect.create(tmp_path / "big.zarr", shape=(1024, 1024, 2048), dtype="uint16",
                            chunks=(128, 128, 128))
    blocks = zd.from_zarr(big).chunks
    assert blocks == ((256,) * 4, (512,) * 2, (512,) * 4), blocks
    # Uneven grids: blocks of equal size, or a last one at least half the others.
    odd = zarrdirect.create(tmp_path / "odd.zarr", shape=(50, 64), dtype="uint8", chunks=(10, 64))
    with dask.config.set({"array.chunk-size": f"{3 * 640}B"}):
        assert zd.from_zarr(odd).chunks == ((30, 20), (64,))
    # A grid of billions of chunks is planned in a few steps, to about the chunk size.
    huge = zd._block_units((7 * 10 ** 9,), (7,), 4, 128 << 20)
    assert 0.9 * (128 << 20) <= huge[0] * 28 <= 128 << 20, huge


def test_blocks_follow_the_chunks_argument(tmp_path) -> None:
    expected = source_data()
    array = zarrdirect.save(tmp_path / "p.zarr", expected, chunks=(10, 25, 12), codec="raw")
    x = zd.from_zarr(array, chunks=zd.storage_chunks(array))
    assert x.chunks == ((10, 10, 10, 10, 5), (25, 25), (12,))
    y = zd.from_zarr(tmp_path / "p.zarr", chunks=(7, 50, 5))
    assert y.chunks[0] == (7,) * 6 + (3,) and y.chunks[2] == (5, 5, 2)
    np.testing.assert_array_equal(y.compute(), expected)
    assert int(x.sum().compute()) == int(expected.sum(dtype=np.uint64))


def test_each_block_is_one_zarrdirect_read_of_its_region(sharded) -> None:
    path, expected = sharded
    x = zd.from_zarr(path)
    graph = dict(x.__dask_graph__())
    assert len(graph) == x.npartitions == 3 * 3 * 1
    task = graph[(x.name, 1, 2, 0)]
    assert task[0] is zd._read_block and isinstance(task[1], zarrdirect.Array)
    assert task[2] == (slice(15, 30), slice(40, 50), slice(0, 12)) and task[3] == "cpu"


def test_processes_scheduler(sharded) -> None:
    path, expected = sharded
    x = zd.from_zarr(path)
    total = (x.astype(np.uint64) * 3).sum().compute(scheduler="processes", num_workers=2)
    assert int(total) == int(expected.sum(dtype=np.uint64)) * 3


def test_names_follow_the_stored_data(sharded) -> None:
    path, expected = sharded
    before = zd.from_zarr(path)
    assert zd.from_zarr(path).name == before.name
    assert zd.from_zarr(path, chunks=(5, 10, 12)).name != before.name
    writer = zarrdirect.open(path, mode="r+")
    writer[0:15, 0:20, :] = 1
    after = zd.from_zarr(path)
    assert after.name != before.name  # a new key: no block cached under the old one is reused
    assert (after[0:15, 0:20].compute() == 1).all()


def test_multiscale_level(tmp_path) -> None:
    level0 = source_data((2, 24, 32))
    write_ome_image(tmp_path / "img", level0, chunks=(1, 8, 8))
    x = zd.from_zarr(tmp_path / "img", level=1, chunks=(1, 8, 8))
    assert x.shape == (2, 12, 16) and x.chunks == ((1, 1), (8, 4), (8, 8))
    assert zd.from_zarr(tmp_path / "img", level=1).chunks == ((2,), (12,), (16,))  # one small block
    np.testing.assert_array_equal(x.compute(), level0[:, ::2, ::2])
    image = zarrdirect.open_multiscale(tmp_path / "img")
    np.testing.assert_array_equal(zd.from_zarr(image).compute(), level0)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="level"):
        zd.from_zarr(image[0], level=1)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="device"):
        zd.from_zarr(tmp_path / "img" / "0", device="tpu")


def test_to_zarr_rechunks_to_shards_so_no_two_tasks_write_one_file(tmp_path) -> None:
    expected = source_data()
    x = da.from_array(expected, chunks=(7, 9, 5))  # boundaries nowhere near the shards'
    written = zd.to_zarr(x + 1, tmp_path / "out.zarr", chunks=(5, 10, 6), shards=(15, 20, 12), codec="zstd:1")
    assert written.mode == "r+" and written.chunks == (5, 10, 6) and written.shards == (15, 20, 12)
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "out.zarr")[:], expected + 1)
    assert not [name for name in _files(tmp_path / "out.zarr") if "lock" in name]


def test_to_zarr_write_tasks_cover_whole_stored_files(tmp_path) -> None:
    x = da.from_array(source_data(), chunks=(7, 9, 5))
    delayed = zd.to_zarr(x, tmp_path / "out.zarr", compute=False, chunks=(5, 10, 6), shards=(10, 20, 12))
    regions = [task[3] for task in dict(delayed.__dask_graph__()).values()
               if isinstance(task, tuple) and task and task[0] is zd._write_block]
    assert regions
    for region in regions:
        for box, unit, extent in zip(region, (10, 20, 12), SHAPE):
            assert box.start % unit == 0 and (box.stop % unit == 0 or box.stop == extent), region
    # Nothing written before compute: the array exists, every chunk missing (the fill value).
    assert not (zarrdirect.open(tmp_path / "out.zarr")[:]).any()
    delayed.compute(scheduler="threads")
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "out.zarr")[:], source_data())


def test_aligned_chunks_keep_aligned_blocks_and_fix_others() -> None:
    assert zd._aligned_chunks(((20, 20, 5), (7, 7)), (10, 7)) == ((20, 20, 5), (7, 7))
    assert zd._aligned_chunks(((7, 7, 7, 4),), (5,)) == ((5, 5, 5, 5, 5),)
    assert zd._aligned_chunks(((23, 23, 4),), (10,)) == ((20, 20, 10),)


def test_to_zarr_defaults_and_processes_scheduler(tmp_path) -> None:
    expected = source_data(dtype="f4")
    x = da.from_array(expected, chunks=(15, 25, 12))
    with dask.config.set(scheduler="processes", num_workers=2):
        zd.to_zarr(x, tmp_path / "out.zarr", codec="raw", zarr_format=2)
    array = zarrdirect.open(tmp_path / "out.zarr")
    assert array.zarr_format == 2 and array.chunks == (15, 25, 12) and array.dtype == np.float32
    np.testing.assert_array_equal(array[:], expected)
    with pytest.raises(zarrdirect.ZarrdirectError):  # an existing array is not replaced silently
        zd.to_zarr(x, tmp_path / "out.zarr")
    zd.to_zarr(x[::-1], tmp_path / "out.zarr", overwrite=True, dtype="f8", shards=(30, 50, 12))
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "out.zarr")[:], expected[::-1].astype("f8"))


def test_to_zarr_of_an_empty_array(tmp_path) -> None:
    # An axis of length 0 gave a default chunk of 0, refused as "chunks must be positive".
    empty = da.zeros((0, 5), chunks=(2, 2), dtype="i2")
    array = zd.to_zarr(empty, tmp_path / "e.zarr")
    assert array.shape == (0, 5) and array.chunks == (1, 2) and array[...].shape == (0, 5)

def test_round_trip_through_from_zarr_and_to_zarr(sharded, tmp_path) -> None:
    path, expected = sharded
    doubled = zd.from_zarr(path).astype(np.uint32) * 2
    zd.to_zarr(doubled, tmp_path / "doubled.zarr", shards=(15, 20, 12), chunks=(5, 5, 12))
    np.testing.assert_array_equal(zd.from_zarr(tmp_path / "doubled.zarr").compute(), expected.astype(np.uint32) * 2)


def _files(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(folder, name), root)
                  for folder, _, names in os.walk(root) for name in names)


def _cupy_with_device():
    cupy = pytest.importorskip("cupy")
    if not zarrdirect.cuda_available():
        pytest.skip("no CUDA device")
    return cupy


def test_device_blocks_are_cupy(sharded, tmp_path) -> None:
    cupy = _cupy_with_device()
    path, expected = sharded
    x = zd.from_zarr(path, device="cuda")
    assert type(x._meta) is cupy.ndarray
    block = x.blocks[1, 0, 0].compute(scheduler="threads")
    assert isinstance(block, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(x.compute(scheduler="threads")), expected)
    zd.to_zarr(x * 2, tmp_path / "gpu.zarr", chunks=(5, 10, 6), shards=(15, 20, 12))
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "gpu.zarr")[:], expected * 2)


def test_block_reads_share_the_cores_among_those_running(sharded, monkeypatch) -> None:
    path, expected = sharded
    cores = os.cpu_count() or 1
    seen = []
    original = zarrdirect.Array.read
    together = __import__("threading").Barrier(4)

    def read(array, region=None, **options):
        seen.append(options.get("threads"))
        if len(seen) <= 4:
            together.wait(timeout=10)  # the first four reads run at the same time
        return original(array, region, **options)

    monkeypatch.setattr(zarrdirect.Array, "read", read)
    x = zd.from_zarr(path)
    with dask.config.set(scheduler="threads", num_workers=4):
        np.testing.assert_array_equal(x.compute(), expected)
    # The fourth of four running reads gets a quarter of the cores (at least one thread).
    assert min(seen) == max(1, cores // 4), seen
    seen.clear()
    together = __import__("threading").Barrier(1)
    np.testing.assert_array_equal(x.compute(scheduler="sync"), expected)
    assert set(seen) == {cores}, seen  # one read at a time: all the cores
    seen.clear()
    monkeypatch.setenv("ZARRDIRECT_THREADS", "1")  # a ceiling the sharing keeps
    np.testing.assert_array_equal(x.compute(scheduler="sync"), expected)
    assert set(seen) == {1}, seen
