"""zarrdirect.dask on a dask.distributed LocalCluster of 2 worker processes, one of them killed
in the middle of a to_zarr job."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

import zarrdirect

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import zarrdirect.dask as zd  # noqa: E402

SHAPE = (64, 48, 20)
SHARDS = (16, 24, 20)


def source_data() -> np.ndarray:
    return (np.arange(int(np.prod(SHAPE)), dtype=np.uint64) * 40503 % 4093).astype("u2").reshape(SHAPE)


@pytest.fixture(scope="module")
def client():
    # Worker processes (spawned), one thread each: every block is read or written in a process
    # other than the test's, from a pickled task.
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as connected:
        yield connected


def test_from_zarr_and_to_zarr_run_on_the_workers(client, tmp_path) -> None:
    expected = source_data()
    zarrdirect.save(tmp_path / "in.zarr", expected, chunks=(8, 8, 10), shards=SHARDS, codec="zstd:1")
    x = zd.from_zarr(tmp_path / "in.zarr")
    assert int(client.compute(x.astype(np.uint64).sum()).result()) == int(expected.sum(dtype=np.uint64))
    pids = x.map_blocks(lambda block: np.full((1, 1, 1), os.getpid()), chunks=(1, 1, 1), dtype=np.int64)
    pids = set(client.compute(pids).result().ravel().tolist())
    assert os.getpid() not in pids

    # dask.array.from_array over a zarrdirect Array: the array pickles to the workers as its path.
    array = zarrdirect.open(tmp_path / "in.zarr")
    plain = da.from_array(array, chunks=array.shards)
    assert int(client.compute(plain.astype(np.uint64).sum()).result()) == int(expected.sum(dtype=np.uint64))

    written = zd.to_zarr(x[::-1] + 1, tmp_path / "out.zarr", chunks=(8, 8, 10), shards=SHARDS, codec="zstd:1")
    np.testing.assert_array_equal(written[:], expected[::-1] + 1)
    persisted = client.persist(zd.from_zarr(tmp_path / "out.zarr"))
    np.testing.assert_array_equal(persisted.compute(), expected[::-1] + 1)


def _kill_once(block: np.ndarray, marker: str, output: str, block_info=None) -> np.ndarray:
    """Kills its own worker process the first time block (2, 0, 0) is made, once other blocks
    have been written (the job is under way); the rerun, on whichever worker, passes it through."""
    if block_info[None]["chunk-location"] == (2, 0, 0):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return block
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _chunk_files(output):
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGKILL)
    return block


def _chunk_files(root: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(folder, name), root)
                  for folder, _, names in os.walk(root) for name in names if name != "zarr.json")


def test_a_worker_killed_during_to_zarr(client, tmp_path) -> None:
    expected = source_data()
    marker, output = str(tmp_path / "killed"), str(tmp_path / "out.zarr")
    x = da.from_array(expected, chunks=SHARDS).map_blocks(_kill_once, marker, output, dtype=expected.dtype)
    zd.to_zarr(x, output, chunks=(8, 8, 10), shards=SHARDS, codec="zstd:1")

    assert os.path.exists(marker)  # the worker was killed, and the job finished all the same
    np.testing.assert_array_equal(zarrdirect.open(output)[:], expected)
    # Every file is a whole shard: the shards the grid has, nothing else (no lock or scratch file).
    grid = [range(-(-extent // unit)) for extent, unit in zip(SHAPE, SHARDS)]
    shards = sorted(os.path.join("c", *(str(i) for i in index)) for index in np.ndindex(*map(len, grid)))
    assert _chunk_files(output) == shards
