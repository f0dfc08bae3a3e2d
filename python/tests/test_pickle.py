"""Arrays, groups and images pickle as what they point to; Dask tokens follow the stored data;
chunks and shards are reported as zarr-python 3 reports them."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import zarrdirect

SHAPE = (40, 50)


def data(shape=SHAPE, dtype="u2") -> np.ndarray:
    return (np.arange(int(np.prod(shape))) * 7 % 1000).astype(dtype).reshape(shape)


def write_ome_image(path: Path, level0: np.ndarray, *, chunks=(8, 8, 8), shards=None) -> Path:
    """A two-level OME-Zarr 0.5 image (axes c, y, x; level 1 halves y and x), written by zarrdirect."""
    axes = [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"}]
    datasets = [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 0.5, 0.25]},
                                                    {"type": "translation", "translation": [0.0, 10.0, 20.0]}]},
        {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 0.5]},
                                                    {"type": "translation", "translation": [0.0, 10.25, 20.125]}]},
    ]
    ome = {"version": "0.5", "multiscales": [{"name": "cells", "axes": axes, "datasets": datasets}]}
    zarrdirect.create_group(path, attributes={"ome": ome})
    for name, level in (("0", level0), ("1", level0[:, ::2, ::2])):
        zarrdirect.save(path / name, np.ascontiguousarray(level), chunks=chunks, shards=shards, codec="zstd:1")
    return path


def test_array_pickles_as_its_path_and_reopens(tmp_path) -> None:
    expected = data((200, 300))  # 120 kB of data: the pickle must not carry it
    zarrdirect.save(tmp_path / "a.zarr", expected, chunks=(64, 64))
    array = zarrdirect.open(tmp_path / "a.zarr")
    blob = pickle.dumps(array)
    assert len(blob) < 1000
    copy = pickle.loads(blob)
    assert type(copy) is type(array) and copy.path == array.path and copy.shape == array.shape
    np.testing.assert_array_equal(copy[:], expected)

    # Reopened where unpickled: a change written after pickling is what the copy reads.
    writer = zarrdirect.open(tmp_path / "a.zarr", mode="r+")
    writer[0:10, 0:10] = 9
    np.testing.assert_array_equal(pickle.loads(blob)[0:10, 0:10], np.full((10, 10), 9, "u2"))


def test_writable_array_keeps_its_mode_and_plain_array_its_name(tmp_path) -> None:
    writer = zarrdirect.save(tmp_path / "a.zarr", data())
    copy = pickle.loads(pickle.dumps(writer))
    assert copy.mode == "r+"
    copy[0:2, 0:2] = 1
    assert (zarrdirect.open(tmp_path / "a.zarr")[0:2, 0:2] == 1).all()
    readonly = pickle.loads(pickle.dumps(zarrdirect.open(tmp_path / "a.zarr")))
    assert readonly.mode == "r"

    zarrdirect.create_group(tmp_path / "g")
    zarrdirect.save(tmp_path / "g" / "member", data())
    group = zarrdirect.open_group(tmp_path / "g")
    member = pickle.loads(pickle.dumps(group["member"]))
    assert member.name == "/member" and member.shape == SHAPE
    group_copy = pickle.loads(pickle.dumps(group))
    assert group_copy == group and group_copy.members() == ["member"]
    indexer = pickle.loads(pickle.dumps(zarrdirect.open(tmp_path / "a.zarr").cuda))
    assert indexer._array.path == str(tmp_path / "a.zarr")


def test_multiscale_pickles_as_its_path(tmp_path) -> None:
    level0 = data((2, 16, 24))
    image = zarrdirect.open_multiscale(write_ome_image(tmp_path / "img", level0))
    blob = pickle.dumps(image)
    assert len(blob) < 1000
    copy = pickle.loads(blob)
    assert copy.path == image.path and copy.levels == image.levels
    np.testing.assert_array_equal(copy.read(level=1), level0[:, ::2, ::2])
    level = pickle.loads(pickle.dumps(image[1]))
    assert level.name == "/1"
    np.testing.assert_array_equal(level[:], level0[:, ::2, ::2])


def test_dask_token_is_stable_and_follows_writes(tmp_path) -> None:
    tokenize = pytest.importorskip("dask.base").tokenize
    writer = zarrdirect.create(tmp_path / "a.zarr", shape=SHAPE, dtype="u2", chunks=(10, 10), codec="raw")
    writer[:] = data()
    first = tokenize(zarrdirect.open(tmp_path / "a.zarr"))
    assert tokenize(zarrdirect.open(tmp_path / "a.zarr")) == first
    assert tokenize(pickle.loads(pickle.dumps(zarrdirect.open(tmp_path / "a.zarr")))) == first

    # Raw chunks: a rewrite keeps every file's size; the token still changes (new files).
    writer[0:10, 0:10] = data()[0:10, 0:10] + 1
    second = tokenize(zarrdirect.open(tmp_path / "a.zarr"))
    assert second != first
    writer.attrs["note"] = "metadata only"
    assert tokenize(zarrdirect.open(tmp_path / "a.zarr")) != second

    other = zarrdirect.save(tmp_path / "b.zarr", data(), chunks=(10, 10), codec="raw")
    assert tokenize(other) != tokenize(zarrdirect.open(tmp_path / "a.zarr"))


def test_dask_token_reads_no_data(tmp_path, monkeypatch) -> None:
    tokenize = pytest.importorskip("dask.base").tokenize
    zarrdirect.save(tmp_path / "a.zarr", data(), chunks=(10, 10))
    array = zarrdirect.open(tmp_path / "a.zarr")

    def refuse(*args, **kwargs):
        raise AssertionError("tokenize read the array")

    monkeypatch.setattr(zarrdirect.Array, "_read", refuse)
    monkeypatch.setattr(zarrdirect.Array, "__array__", refuse)
    assert isinstance(tokenize(array), str)


def test_chunks_are_inner_chunks_and_shards_the_shard_shape(tmp_path) -> None:
    sharded = zarrdirect.save(tmp_path / "s.zarr", data(), chunks=(8, 10), shards=(16, 20))
    assert sharded.chunks == (8, 10) and sharded.shards == (16, 20)
    assert sharded.info["chunks"] == [8, 10] and sharded.info["shards"] == [16, 20]
    # zarr-python 2's chunk grid surfaces follow `chunks`; the files follow the shards.
    assert sharded.cdata_shape == (5, 5) and sharded.nchunks == 25
    assert sharded.shard_grid_shape == (3, 3) and sharded.storage_unit == (16, 20)
    assert "chunks=(8, 10)" in repr(sharded)

    plain = zarrdirect.save(tmp_path / "p.zarr", data(), chunks=(8, 10))
    assert plain.chunks == (8, 10) and plain.shards is None and plain.storage_unit == (8, 10)
    assert plain.cdata_shape == plain.shard_grid_shape == (5, 5) and plain.nchunks == 25

    image = zarrdirect.open_multiscale(write_ome_image(tmp_path / "img", data((2, 16, 16)), chunks=(1, 4, 4),
                                                       shards=(2, 8, 8)))
    assert image.levels[0]["chunks"] == (1, 4, 4) and image.levels[0]["shards"] == (2, 8, 8)
    assert image[0].chunks == (1, 4, 4) and image[0].shards == (2, 8, 8)
