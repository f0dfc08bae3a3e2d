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
