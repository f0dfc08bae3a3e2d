"""Writing Zarr from Python: create, open(mode="r+"), arr[...] = value, save, and the cross-check
with zarr-python 2 in both directions."""

from __future__ import annotations

import os

import numpy as np
import pytest

import zarrdirect

SHAPE = (37, 50)
CHUNKS = (16, 20)
CODECS = ["raw", "zstd:3", "zstd:1+crc32c", "blosc:lz4:5:shuffle", "blosc:zstd:3:bitshuffle", "gzip:6", "zlib:1",
          "bz2:9", "lzma:1", "lz4"]
DTYPES = ["|b1", "|u1", "<i2", "<u2", "<i4", "<u8", "<f2", "<f4", "<f8", "<c8"]


def sample(dtype, shape=SHAPE, seed=7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return (rng.standard_normal(shape) * 100).astype(dtype)


def files_below(root) -> dict:
    out = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                out[os.path.relpath(path, root)] = handle.read()
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(tmp_path, zarr_format, codec):
    if zarr_format == 2 and "+crc32c" in codec:
        pytest.skip("v2 has no crc32c codec (refusal tested in test_bad_codec_specs)")
    data = sample("<u2")
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype="u2", chunks=CHUNKS, codec=codec, zarr_format=zarr_format)
    arr[...] = data
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], data)
    block = sample("<u2", (10, 13), seed=3)
    arr[5:15, 31:44] = block
    data[5:15, 31:44] = block
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], data)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_and_sharding(tmp_path, dtype):
    data = sample(dtype)
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype=dtype, chunks=(8, 10), shards=(16, 20), codec="zstd:1")
    arr[:] = data
    arr[3:9, 7:12] = data[3:9, 7:12][::-1]
    data[3:9, 7:12] = data[3:9, 7:12][::-1].copy()
    np.testing.assert_array_equal(arr[...], data)


def test_mode_r_refuses_writes_and_r_plus_writes(tmp_path):
    zarrdirect.create(tmp_path / "a", shape=(4, 4), dtype="f4", chunks=(2, 2))
    read_only = zarrdirect.open(tmp_path / "a")
    assert read_only.mode == "r"
    with pytest.raises(zarrdirect.InvalidArgumentError, match="mode='r\\+'"):
        read_only[0, 0] = 1
    writable = zarrdirect.open(tmp_path / "a", mode="r+")
    writable[1, 2] = 5.5
    writable[3] = np.arange(4)
    expected = np.zeros((4, 4), "f4")
    expected[1, 2] = 5.5
    expected[3] = np.arange(4)
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], expected)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="give shape and dtype"):
        zarrdirect.open(tmp_path / "a", mode="w")
    assert (tmp_path / "a" / "zarr.json").exists()  # nothing removed
    with pytest.raises(zarrdirect.InvalidArgumentError, match="mode must be one of"):
        zarrdirect.open(tmp_path / "a", mode="rw")


def test_zarr_python_modes_create_append_and_replace(tmp_path):
    path = tmp_path / "m"
    created = zarrdirect.open(path, mode="w-", shape=(6, 4), dtype="i2", chunks=(3, 2), zarr_format=2)
    assert created.mode == "r+" and created.shape == (6, 4) and created.zarr_format == 2
    created[...] = 7
    with pytest.raises(zarrdirect.ZarrdirectError, match="exists|already"):
        zarrdirect.open(path, mode="x", shape=(2,), dtype="u1")
    appended = zarrdirect.open(path, mode="a")  # exists: opened for writing, not recreated
    appended[0] = 1
    np.testing.assert_array_equal(zarrdirect.open(path)[...], np.array([[1] * 4] + [[7] * 4] * 5, "i2"))
    fresh = zarrdirect.open(tmp_path / "new", mode="a", shape=(5,), dtype="f8", fill_value=2.5)
    np.testing.assert_array_equal(fresh[...], np.full(5, 2.5))
    replaced = zarrdirect.open(path, mode="w", shape=(3,), dtype="u1", codec="raw")
    assert replaced.shape == (3,) and replaced.zarr_format == 3
    np.testing.assert_array_equal(zarrdirect.open(path)[...], np.zeros(3, "u1"))
    assert not (path / ".zarray").exists()  # the old v2 array was replaced, not mixed in
    with pytest.raises(zarrdirect.InvalidArgumentError, match="can only be given with mode"):
        zarrdirect.open(path, mode="r+", shape=(3,))
    with pytest.raises(zarrdirect.InvalidArgumentError, match="overwrite"):
        zarrdirect.open(path, mode="w", shape=(3,), dtype="u1", overwrite=True)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="URL"):
        zarrdirect.open("http://127.0.0.1:9/a.zarr", mode="a", shape=(3,), dtype="u1")


def test_sources_broadcast_strided_and_cast(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype="i4", chunks=CHUNKS, fill_value=-1)
    np.testing.assert_array_equal(arr[...], np.full(SHAPE, -1, "i4"))
    arr[:, :] = 3  # a scalar broadcasts
    transposed = np.arange(50 * 37, dtype="i8").reshape(50, 37).T  # strided, and cast to i4
    arr[...] = transposed
    np.testing.assert_array_equal(arr[...], transposed.astype("i4"))
    arr[2:4, :] = np.arange(50)  # a row broadcast over two rows
    np.testing.assert_array_equal(arr[2:4], np.tile(np.arange(50, dtype="i4"), (2, 1)))
    big_endian = np.arange(10, dtype=">i4")
    arr[5, 0:10] = big_endian
    np.testing.assert_array_equal(arr[5, 0:10], np.arange(10))


def test_scalars_numpy_refuses_to_assign_are_refused(tmp_path):
    # NumPy (and zarr-python 2) raise for NaN, infinity or overflow assigned to integers as a
    # scalar or list; zarrdirect's astype wrote -2**31 for NaN, silently. Arrays still cast.
    arr = zarrdirect.create(tmp_path / "a", shape=(4, 4), dtype="i4", chunks=(2, 2), fill_value=5)
    for key in [np.s_[0:2], np.s_[::2], np.s_[0], (0, 0)]:
        with pytest.raises(ValueError):
            arr[key] = np.nan
        with pytest.raises(ValueError):
            arr[key] = np.float64("nan")
        with pytest.raises(OverflowError):
            arr[key] = float("inf")
    with pytest.raises(ValueError):
        arr[0, 0:2] = [np.nan, 1.0]
    with pytest.raises(ValueError):
        arr.oindex[[0, 1], 0] = np.nan
    with pytest.raises(ValueError):
        arr.vindex[[0, 1], [0, 1]] = np.nan
    with pytest.raises(ValueError):
        arr.write(np.nan, "0:1")
    np.testing.assert_array_equal(arr[...], np.full((4, 4), 5, "i4"))
    arr[0, 0:2] = [1.7, 2]
    arr[1] = np.array([1.5, -2.5, 3.0, 4.0])
    np.testing.assert_array_equal(arr[0:2], [[1, 2, 5, 5], [1, -2, 3, 4]])

def test_fill_chunks_are_not_stored(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype="u2", chunks=CHUNKS, codec="raw")
    arr[...] = 0
    assert set(files_below(tmp_path / "a")) == {"zarr.json"}
    arr[...] = 1
    assert "c/0/0" in files_below(tmp_path / "a")
    stats = arr.write(np.zeros((16, 20), "u2"), (slice(0, 16), slice(0, 20)))
    assert stats["files_erased"] == 1
    assert "c/0/0" not in files_below(tmp_path / "a")
    arr.write(np.zeros(SHAPE, "u2"), write_empty_chunks=True)
    assert "c/0/0" in files_below(tmp_path / "a")


def test_metadata_options(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(6, 8), dtype="f8", chunks=(3, 4), fill_value=float("nan"),
                            attributes={"unit": "nm"}, dimension_names=["y", None])
    assert np.isnan(arr.fill_value)
    assert arr.attrs == {"unit": "nm"}
    assert arr.dimension_names == ("y", None)
    assert np.isnan(arr[...]).all()
    v2 = zarrdirect.create(tmp_path / "b", shape=(6,), dtype=">i2", chunks=3, zarr_format=2, attributes={"k": 1})
    assert v2.zarr_format == 2 and v2.attrs == {"k": 1}
    group = zarrdirect.create_group(tmp_path / "g", attributes={"x": 2})  # returned open, as zarr-python's
    assert isinstance(group, zarrdirect.Group) and group.attrs == {"x": 2}
    assert zarrdirect.open_group(tmp_path / "g").attrs == {"x": 2}
    # zarr-python's load and open_array
    np.testing.assert_array_equal(zarrdirect.load(tmp_path / "b"), v2[...])
    assert zarrdirect.open_array(tmp_path / "b", mode="r+").mode == "r+"
    with pytest.raises(zarrdirect.InvalidArgumentError, match="open_group"):
        zarrdirect.load(tmp_path / "g")


def test_out_of_range_fill_values_and_negative_extents_are_refused(tmp_path):
    # NumPy 1.x wrapped these silently (2**40 in int32 was stored as fill 0, -1 in uint8 as 255);
    # the metadata reader refuses them, and so does create now. Negative extents were sent on as
    # 2**64 - 1 and refused with that number.
    for dtype, fill in [("i4", 2**40), ("u1", -1), ("u1", 256), ("i8", 2**63), ("u8", -1), ("i2", 1e10),
                        ("u2", np.int64(70000))]:
        with pytest.raises(zarrdirect.InvalidArgumentError, match="out of range"):
            zarrdirect.create(tmp_path / "a", shape=(4,), dtype=dtype, fill_value=fill)
        assert not (tmp_path / "a").exists()
    assert zarrdirect.create(tmp_path / "ok", shape=(2,), dtype="u8", fill_value=2**64 - 1).fill_value == 2**64 - 1
    assert zarrdirect.create(tmp_path / "ok", shape=(2,), dtype="i1", fill_value=-128.0, overwrite=True).fill_value == -128
    for options in [dict(shape=(-1, 3)), dict(shape=(4, 3), chunks=(-1, 3)), dict(shape=(4, 4), chunks=(2, 2), shards=(-2, 4))]:
        with pytest.raises(zarrdirect.InvalidArgumentError, match="negative extent"):
            zarrdirect.create(tmp_path / "b", dtype="u1", **options)

def test_existing_nodes_need_overwrite(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(10,), dtype="u1", chunks=5)
    arr[...] = 9
    before = files_below(tmp_path / "a")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="overwrite"):
        zarrdirect.create(tmp_path / "a", shape=(10,), dtype="u1", chunks=5)
    assert files_below(tmp_path / "a") == before
    fresh = zarrdirect.create(tmp_path / "a", shape=(4,), dtype="f4", overwrite=True)
    assert fresh.shape == (4,)
    assert set(files_below(tmp_path / "a")) == {"zarr.json"}


def test_bad_input_changes_nothing(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(10, 10), dtype="u2", chunks=(5, 5))
    arr[...] = 4
    before = files_below(tmp_path / "a")
    with pytest.raises(zarrdirect.ZarrdirectError):
        arr[0:3, 0:3] = np.ones((4, 4), "u2")  # wrong shape
    with pytest.raises(IndexError):
        arr[0:3, 12] = 1  # out of bounds
    with pytest.raises(zarrdirect.ZarrdirectError):
        arr[::2] = np.ones((3, 10), "u2")  # wrong shape for a strided selection
    with pytest.raises(IndexError):
        arr.write(1, (slice(None, None, 2),))  # write() takes boxes
    assert files_below(tmp_path / "a") == before


def test_bad_codec_specs(tmp_path):
    for spec, zarr_format in [("snappy", 3), ("zstd:x", 3), ("blosc:lz9", 3), ("zstd+crc32c", 2)]:
        with pytest.raises(zarrdirect.InvalidArgumentError, match="codec spec"):
            zarrdirect.create(tmp_path / "a", shape=(4,), dtype="u1", codec=spec, zarr_format=zarr_format)
        assert not (tmp_path / "a").exists()


def test_codec_list(tmp_path):
    codecs = [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}]
    arr = zarrdirect.create(tmp_path / "a", shape=(20,), dtype="i4", chunks=7, codec=codecs)
    arr[...] = np.arange(20)
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], np.arange(20))


def test_save(tmp_path):
    data = sample("<f4", (30, 20))
    zarrdirect.save(tmp_path / "a", data, chunks=(8, 8), codec="blosc")
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], data)


def test_write_zarr_from_gpu_wants_a_cuda_array(tmp_path):
    with pytest.raises(zarrdirect.InvalidArgumentError, match="CUDA array"):
        zarrdirect.write_zarr_from_gpu(np.zeros(3), tmp_path / "a")


@pytest.mark.skipif(zarrdirect._native.cuda_built, reason="checks the message of builds without CUDA")
def test_device_values_need_cuda(tmp_path):
    class FakeDevice:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<u2", "data": (1234, False), "version": 3}

    arr = zarrdirect.create(tmp_path / "a", shape=(4,), dtype="u2")
    with pytest.raises(zarrdirect.UnsupportedError, match="CUDA"):
        arr[...] = FakeDevice()


def test_cuda_array_values(tmp_path):
    cupy = pytest.importorskip("cupy")
    if not zarrdirect.cuda_available():
        pytest.skip("no usable CUDA device")
    data = cupy.arange(37 * 50, dtype=cupy.uint16).reshape(SHAPE)
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype="u2", chunks=(8, 10), shards=(16, 20))
    arr[...] = data
    arr[2:9, 3:28] = data[10:17, 0:50:2]  # a strided device view (25 columns)
    expected = cupy.asnumpy(data)
    expected[2:9, 3:28] = expected[10:17, 0:50:2]
    np.testing.assert_array_equal(arr[...], expected)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="dtype"):
        arr[0:2, 0:2] = cupy.zeros((2, 2), cupy.float32)
    saved = zarrdirect.write_zarr_from_gpu(data, tmp_path / "b", chunks=(16, 16), codec="blosc")
    np.testing.assert_array_equal(saved[...], cupy.asnumpy(data))
    try:
        import torch
    except ImportError:
        return
    tensor = torch.arange(37 * 50, dtype=torch.int32, device="cuda").reshape(SHAPE)
    tarr = zarrdirect.save(tmp_path / "t", tensor, chunks=(10, 10), zarr_format=2)
    np.testing.assert_array_equal(tarr[...], tensor.cpu().numpy())
