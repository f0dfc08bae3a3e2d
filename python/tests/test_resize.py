"""resize, append and nchunks_initialized, as zarr-python names them: the kept elements are the old
ones, what a resize adds reads as the fill value, and zarr-python 2 reads the result the same."""

from __future__ import annotations

import numpy as np
import pytest

import zarrdirect

zarr = pytest.importorskip("zarr")


def make(tmp_path, name="a", shape=(10, 12), chunks=(4, 5), zarr_format=3, fill=-7, **options):
    data = np.arange(np.prod(shape), dtype="int32").reshape(shape)
    arr = zarrdirect.create(tmp_path / name, shape=shape, dtype="int32", chunks=chunks, zarr_format=zarr_format,
                            fill_value=fill, **options)
    arr[...] = data
    return arr, data


def expected_after(data, shape, fill=-7):
    out = np.full(shape, fill, dtype=data.dtype)
    keep = tuple(slice(0, min(a, b)) for a, b in zip(data.shape, shape))
    out[keep] = data[keep]
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_shrink_then_grow_shows_the_fill_value(tmp_path, zarr_format):
    arr, data = make(tmp_path, zarr_format=zarr_format)
    arr.resize(6, 7)
    assert arr.shape == (6, 7)
    np.testing.assert_array_equal(arr[...], data[:6, :7])
    arr.resize((10, 12))  # a tuple too, as zarr-python takes it
    np.testing.assert_array_equal(arr[...], expected_after(data[:6, :7], (10, 12)))
    reopened = zarrdirect.open(tmp_path / "a")
    assert reopened.shape == (10, 12)
    np.testing.assert_array_equal(reopened[...], expected_after(data[:6, :7], (10, 12)))


def test_zarr_python_reads_a_resized_v2_array(tmp_path):
    arr, data = make(tmp_path, zarr_format=2)
    arr.resize(7, 20)
    theirs = zarr.open(str(tmp_path / "a"), mode="r")
    assert theirs.shape == (7, 20)
    np.testing.assert_array_equal(theirs[...], expected_after(data[:7], (7, 20)))
    assert arr.nchunks_initialized == theirs.nchunks_initialized


def test_sharded_resize(tmp_path):
    arr, data = make(tmp_path, shape=(16, 20), chunks=(2, 5), shards=(8, 10))
    arr.resize(9, 4)
    np.testing.assert_array_equal(arr[...], data[:9, :4])
    assert arr.nchunks_initialized == 2  # shards (0, 0) and (1, 0)
    arr.resize(16, 20)
    np.testing.assert_array_equal(arr[...], expected_after(data[:9, :4], (16, 20)))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_append_matches_numpy_concatenate(tmp_path, axis):
    arr, data = make(tmp_path)
    extra_shape = list(data.shape)
    extra_shape[axis] = 3
    extra = np.arange(np.prod(extra_shape), dtype="int32").reshape(extra_shape) + 1000
    new_shape = arr.append(extra, axis=axis)
    expected = np.concatenate([data, extra], axis=axis)
    assert new_shape == expected.shape == arr.shape
    np.testing.assert_array_equal(arr[...], expected)
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], expected)


def test_append_and_resize_refusals(tmp_path):
    arr, data = make(tmp_path)
    with pytest.raises(ValueError):
        arr.append(np.zeros((3, 5), dtype="int32"))  # the other axis does not match
    with pytest.raises(ValueError):
        arr.append(np.zeros(12, dtype="int32"))  # another number of dimensions
    with pytest.raises(IndexError):  # NumPy's AxisError is an IndexError (and a ValueError)
        arr.append(np.zeros((10, 12), dtype="int32"), axis=2)
    with pytest.raises(ValueError):
        arr.resize(5)
    with pytest.raises(ValueError):
        arr.resize(-1, 5)
    with pytest.raises(TypeError):
        arr.resize(2.5, 5)
    with pytest.raises(zarrdirect.InvalidMetadataError):
        arr.resize(2 ** 40, 2 ** 40)  # more elements than the metadata allows
    assert arr.shape == (10, 12)
    np.testing.assert_array_equal(arr[...], data)
    read_only = zarrdirect.open(tmp_path / "a")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="r\\+"):
        read_only.resize(3, 3)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="r\\+"):
        read_only.append(data)


def test_nchunks_initialized_counts_stored_chunks(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(8, 8), dtype="uint8", chunks=(4, 4), fill_value=0)
    assert arr.nchunks_initialized == 0
    arr[0:4, 4:8] = 1
    assert arr.nchunks_initialized == 1
    arr[...] = 2
    assert arr.nchunks_initialized == 4 == arr.nchunks
