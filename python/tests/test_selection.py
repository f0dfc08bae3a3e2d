"""Selections beyond boxes: slice steps (negative too), orthogonal indexing with integer lists,
arrays and boolean masks, on host and GPU, equal to NumPy indexing of the same data; only the
chunks holding a selected element are read; Dask's fused slices work."""

from __future__ import annotations

import numpy as np
import pytest
import zarrdirect
from conftest import write_v2_array, write_v3_array

SHAPE = (13, 10, 7)


def _data(dtype) -> np.ndarray:
    rng = np.random.default_rng(5)
    values = rng.integers(0, 250, size=SHAPE)
    return values.astype(dtype)


def _sharded(path, data):
    out = zarrdirect.create(path, shape=data.shape, dtype=data.dtype, chunks=(2, 3, 2), shards=(4, 6, 4), codec="raw")
    out[...] = data
    return path


def _compressed_v3(path, data):
    out = zarrdirect.create(path, shape=data.shape, dtype=data.dtype, chunks=(5, 4, 3), codec="zstd:1")
    out[...] = data
    return path


WRITERS = {
    "v2": lambda p, d: write_v2_array(p, d, (4, 3, 5)),
    "v2-zlib": lambda p, d: write_v2_array(p, d, (3, 4, 2), compressor="zlib"),
    "v3": lambda p, d: write_v3_array(p, d, (5, 4, 3)),
    "v3-zstd": _compressed_v3,
    "sharded": _sharded,
}
DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.complex64]


@pytest.fixture(scope="module", params=[(w, np.dtype(t).name) for w in WRITERS for t in DTYPES[:2]] +
                [("v3", np.dtype(t).name) for t in DTYPES[2:]] + [("sharded", "float64")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def case(request, tmp_path_factory):
    writer, dtype = request.param
    data = _data(np.dtype(dtype))
    path = WRITERS[writer](tmp_path_factory.mktemp("sel") / "a.zarr", data)
    return zarrdirect.open(path), data


def _random_axis(rng, extent: int, orthogonal: bool):
    kind = rng.integers(0, 6 if orthogonal else 4)
    if kind == 0:
        return slice(None)
    if kind == 1:
        bounds = [None, *range(-extent - 2, extent + 3)]
        step = int(rng.integers(1, 6)) * (1 if rng.integers(0, 2) else -1)
        return slice(bounds[rng.integers(len(bounds))], bounds[rng.integers(len(bounds))], step)
    if kind == 2:
        return int(rng.integers(-extent, extent))
    if kind == 3:
        return slice(int(rng.integers(0, extent)), int(rng.integers(0, extent + 1)))
    if kind == 4:
        values = rng.integers(-extent, extent, size=int(rng.integers(0, 6)))
        return values.tolist() if rng.integers(0, 2) else values
    return rng.integers(0, 2, size=extent).astype(bool)


def _oindex_reference(data: np.ndarray, key: tuple) -> np.ndarray:
    """NumPy's orthogonal indexing: each axis on its own, integers dropping their axis."""
    result = data
    axis = 0
    for item in key:
        if isinstance(item, (int, np.integer)):
            result = np.take(result, item, axis=axis)
            continue
        if isinstance(item, slice):
            result = result[(slice(None),) * axis + (item,)]
        else:
            item = np.asarray(item)
            picked = np.flatnonzero(item) if item.dtype == bool else item.astype(np.int64)
            result = np.take(result, picked, axis=axis)
        axis += 1
    return result


def test_steps_match_numpy(case) -> None:
    array, data = case
    rng = np.random.default_rng(11)
    for _ in range(40):
        key = tuple(_random_axis(rng, n, False) for n in SHAPE)
        got = array[key]
        expected = data[key]
        assert got.dtype == expected.dtype and got.shape == expected.shape, key
        np.testing.assert_array_equal(got, expected, err_msg=repr(key))


def test_oindex_matches_numpy(case) -> None:
    array, data = case
    rng = np.random.default_rng(12)
    for _ in range(40):
        key = tuple(_random_axis(rng, n, True) for n in SHAPE)
        expected = _oindex_reference(data, key)
        got = array.oindex[key]
        assert got.shape == expected.shape, key
        np.testing.assert_array_equal(got, expected, err_msg=repr(key))
        np.testing.assert_array_equal(array.get_orthogonal_selection(key), expected)


def test_fixed_cases(case) -> None:
    array, data = case
    for key in [(slice(None, None, -1),), (Ellipsis, slice(None, None, -2)), (slice(None, None, 5), 3, slice(None, None, 3)),
                (None, slice(None, None, 2)), (slice(100, None, -4), Ellipsis, -1), (slice(2, 2, -1),)]:
        np.testing.assert_array_equal(array[key], data[key], err_msg=repr(key))
        np.testing.assert_array_equal(array.read(key), data[key])
    np.testing.assert_array_equal(array.read("::-2,5,1::3"), data[::-2, 5, 1::3])
    np.testing.assert_array_equal(array.oindex[[3, 3, -1], 2, [True] * 7], data[[3, 3, -1]][:, 2, :])
    np.testing.assert_array_equal(array.oindex[..., [0, 6]], data[..., [0, 6]])
    assert array.oindex[[], 0, 0].shape == (0,)
    assert array.oindex[1, 2, 3] == data[1, 2, 3]


def test_out_and_strided_out(case) -> None:
    array, data = case
    out = np.zeros((3, 10, 7), dtype=data.dtype)
    assert array.read((slice(None, 6, 2),), out=out) is out
    np.testing.assert_array_equal(out, data[:6:2])
    big = np.zeros((14, 9), dtype=data.dtype, order="F")
    view = big[::2, ::3]
    array.read((slice(None, None, -2), 4, slice(None, None, 3)), out=view)
    np.testing.assert_array_equal(view, data[::-2, 4, ::3])


def test_only_chunks_holding_a_selected_element_are_read(tmp_path) -> None:
    data = np.arange(60 * 40, dtype=np.uint16).reshape(60, 40)
    array = zarrdirect.open(write_v3_array(tmp_path / "a.zarr", data, (5, 4)))
    got, stats = array.read((slice(None, None, 20), slice(3, None, 17)), return_stats=True)
    np.testing.assert_array_equal(got, data[::20, 3::17])
    assert stats["chunks_total"] == 3 * 3  # rows 0, 20, 40; columns 3, 20, 37
    _, stats = array.read((slice(None, None, 2),), return_stats=True)
    assert stats["chunks_total"] == 12 * 10


@pytest.mark.parametrize(
    "key, words",
    [((slice(None, None, 0),), "step cannot be zero"), (([0, 13],), "index 13 is out of bounds for axis 0 with size 13"),
     ((0, [-11]), "index -11 is out of bounds for axis 1 with size 10"),
     ((np.ones(3, bool),), "boolean index did not match indexed array along axis 0"),
     ((None, 0), "None"), (([0.5],), "integer"), (([[0, 1]],), "1-d"), (([0], [0], [0], [0]), "too many indices")],
    ids=repr,
)
def test_bad_orthogonal_selections(case, key, words) -> None:
    array, _ = case
    with pytest.raises(IndexError, match=words):
        array.oindex[key]


def test_plain_indexing_takes_numpy_advanced_indexing_and_points_to_oindex_past_it(case) -> None:
    array, data = case
    np.testing.assert_array_equal(array[[0, 1]], data[[0, 1]])
    np.testing.assert_array_equal(array[:, [0, 1], [0, 1]], data[:, [0, 1], [0, 1]])
    with pytest.raises(IndexError, match="oindex"):
        array[None, [0, 1], [0, 1]]
    with pytest.raises(IndexError, match="step cannot be zero"):
        array[::0]


def test_dask_fused_slices(case) -> None:
    da = pytest.importorskip("dask.array")
    array, data = case
    lazy = da.from_array(array, chunks=array.chunks)
    np.testing.assert_array_equal(lazy[::2, 3, ::3].compute(), data[::2, 3, ::3])
    np.testing.assert_array_equal(lazy[::-1, :, 1::2].compute(), data[::-1, :, 1::2])


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no usable CUDA device")
def test_device_matches_host(case) -> None:
    array, data = case
    rng = np.random.default_rng(13)
    for _ in range(20):
        key = tuple(_random_axis(rng, n, False) for n in SHAPE)
        np.testing.assert_array_equal(array.cuda[key].get(), data[key], err_msg=repr(key))
        key = tuple(_random_axis(rng, n, True) for n in SHAPE)
        np.testing.assert_array_equal(array.oindex.cuda[key].get(), _oindex_reference(data, key), err_msg=repr(key))
