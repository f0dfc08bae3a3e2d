"""What a read reports about itself: the CUDA calls it made and how it read its chunk files."""

from __future__ import annotations

import numpy as np
import pytest

import zarrdirect


@pytest.fixture
def raw(tmp_path):
    data = np.random.default_rng(5).integers(0, 60000, size=(32, 32, 32), dtype=np.uint16)
    array = zarrdirect.create(tmp_path / "r.zarr", shape=data.shape, dtype="uint16", chunks=(8, 8, 8), codec="raw")
    array[...] = data
    return array, data


def test_host_reads_make_no_cuda_calls(raw):
    array, data = raw
    got, stats = array.read(return_stats=True)
    np.testing.assert_array_equal(got, data)
    calls = stats["cuda_calls"]
    assert set(calls) == {"copies", "memsets", "kernel_launches", "event_records", "stream_waits",
                          "synchronizations", "total"}
    assert calls["total"] == 0
    assert stats["io_engine"] == "threads"


@pytest.mark.parametrize("engine", ["threads", "uring"])
def test_io_engine_from_the_environment_reads_the_same(raw, monkeypatch, engine):
    array, data = raw
    monkeypatch.setenv("ZARRDIRECT_IO", engine)
    got, stats = array.read(return_stats=True)
    np.testing.assert_array_equal(got, data)
    if engine == "threads":
        assert stats["io_engine"] == "threads"
    else:  # io_uring, or threads saying why not where the kernel refuses it
        assert stats["io_engine"] == "io_uring" or stats["io_engine"].startswith("threads (io_uring unavailable")


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no usable CUDA device")
def test_device_reads_count_their_cuda_calls(raw):
    array, data = raw
    _, stats = array.read(device="cuda", return_stats=True)
    calls = stats["cuda_calls"]
    assert calls["total"] == sum(v for k, v in calls.items() if k != "total")
    assert calls["total"] > 0 and calls["kernel_launches"] > 0


def test_the_pinned_pool_reports_itself_and_host_reads_allocate_none(raw):
    array, _ = raw
    _, stats = array.read(return_stats=True)
    assert stats["pinned_allocations"] == 0
    pool = zarrdirect.pinned_pool_stats()
    assert set(pool) == {"budget_bytes", "in_use_bytes", "idle_bytes", "allocations", "frees"}
    assert all(isinstance(v, int) and v >= 0 for v in pool.values())
    zarrdirect.trim_pinned_pool()
    assert zarrdirect.pinned_pool_stats()["idle_bytes"] == 0


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no usable CUDA device")
def test_device_reads_stop_allocating_pinned_staging_once_the_pool_is_warm(raw):
    array, data = raw
    array.read(device="cuda")  # warms the pool
    before = zarrdirect.pinned_pool_stats()
    got, stats = array.read(device="cuda", return_stats=True)
    np.testing.assert_array_equal(got.get(), data)
    assert stats["pinned_allocations"] == 0
    after = zarrdirect.pinned_pool_stats()
    assert after["allocations"] == before["allocations"]
    assert after["in_use_bytes"] == 0
    assert after["idle_bytes"] <= after["budget_bytes"]
