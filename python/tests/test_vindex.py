"""arr.vindex: coordinate (point) selection as zarr-python's vindex and NumPy's fancy indexing
with an array on every axis, checked against NumPy on random arrays (dtypes, chunked and
sharded, v2 and v3), reading only the chunks that hold a point, each once."""

from __future__ import annotations

import numpy as np
import pytest
import zarrdirect

SHAPE = (23, 17, 30)


def _random_data(dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dtype.kind == "f":
        return rng.standard_normal(SHAPE).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=SHAPE, dtype=dtype, endpoint=True)


LAYOUTS = {
    "v3 chunked zstd": dict(chunks=(5, 4, 7), codec="zstd:1"),
    "v3 sharded": dict(chunks=(4, 4, 5), shards=(8, 8, 10), codec="zstd:1"),
    "v2 chunked": dict(chunks=(6, 5, 8), codec="zlib:1", zarr_format=2),
    "v3 raw, one chunk": dict(chunks=SHAPE, codec="raw"),
}


@pytest.fixture(scope="module", params=[(np.uint16, "v3 chunked zstd"), (np.float32, "v3 sharded"),
                                        (np.int64, "v2 chunked"), (np.uint8, "v3 raw, one chunk"),
                                        (np.int32, "v3 sharded")],
                ids=lambda p: f"{np.dtype(p[0]).name}-{p[1]}")
def case(request, tmp_path_factory):
    dtype, layout = np.dtype(request.param[0]), request.param[1]
    data = _random_data(dtype, np.random.default_rng(len(layout) * 31 + dtype.itemsize))
    path = tmp_path_factory.mktemp("vindex") / "a.zarr"
    zarrdirect.save(path, data, **LAYOUTS[layout])
    return zarrdirect.open(path), data


def _random_points(rng: np.random.Generator, count, negative: bool = True) -> tuple:
    key = []
    for extent in SHAPE:
        index = rng.integers(0, extent, size=count)
        if negative:
            index = np.where(rng.random(count) < 0.3, index - extent, index)
        key.append(index)
    return tuple(key)


def test_random_points_match_numpy(case) -> None:
    array, data = case
    rng = np.random.default_rng(1)
    for count in (1, 7, 200):
        key = _random_points(rng, count)
        got = array.vindex[key]
        assert isinstance(got, np.ndarray) and got.dtype == data.dtype
        np.testing.assert_array_equal(got, data[key])


def test_duplicates_and_unsorted_keep_the_callers_order(case) -> None:
    array, data = case
    key = ([5, 0, 5, 22, 0, 5], [3, 16, 3, 0, 16, 3], [29, 0, 29, 1, 0, 28])
    np.testing.assert_array_equal(array.vindex[key], data[key])
    reverse = tuple(np.array(axis)[::-1] for axis in key)
    np.testing.assert_array_equal(array.vindex[reverse], data[reverse])


def test_broadcasting_gives_numpys_shape(case) -> None:
    array, data = case
    rows = np.array([[0], [4], [-1]])          # (3, 1)
    cols = np.array([[1, 2, 3, 16]])           # (1, 4)
    key = (rows, cols, 7)
    got = array.vindex[key]
    assert got.shape == data[key].shape == (3, 4)
    np.testing.assert_array_equal(got, data[key])
    key = (np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3), np.arange(6)[::-1].reshape(2, 3))
    np.testing.assert_array_equal(array.vindex[key], data[key])
    key = ([1, 2], 3, -4)  # lists and integers mixed
    np.testing.assert_array_equal(array.vindex[key], data[key])


def test_all_integers_give_a_scalar(case) -> None:
    array, data = case
    got = array.vindex[3, -2, 11]
    assert np.ndim(got) == 0 and got == data[3, -2, 11]


def test_boolean_mask_of_the_arrays_shape(case) -> None:
    array, data = case
    mask = np.random.default_rng(2).random(SHAPE) < 0.01
    np.testing.assert_array_equal(array.vindex[mask], data[mask])
    np.testing.assert_array_equal(array.get_mask_selection(mask), data[mask])


def test_empty_selections(case) -> None:
    array, data = case
    empty = np.array([], dtype=np.int64)
    got = array.vindex[empty, empty, empty]
    assert got.shape == (0,) and got.dtype == data.dtype
    got = array.vindex[np.zeros((2, 0), np.int64), 0, 0]
    assert got.shape == (2, 0)
    assert array.vindex[np.zeros(SHAPE, bool)].shape == (0,)


def test_zarr_python_names(case) -> None:
    array, data = case
    key = ([1, 2, 3], [4, 5, 6], [7, 8, 9])
    np.testing.assert_array_equal(array.get_coordinate_selection(key), data[key])


@pytest.mark.parametrize(
    "key, words",
    [
        (([0], [0], [30]), "index 30 is out of bounds for axis 2 with size 30"),
        (([0], [-18], [0]), "index -18 is out of bounds for axis 1 with size 17"),
        (([23, 0], 0, 0), "index 23 is out of bounds for axis 0 with size 23"),
        (([0, 1], [0, 1, 2], 0), "do not broadcast"),
        (([0], [0]), "one integer array (or integer) per axis"),
        (([0], slice(None), [0]), "axis 1 got slice"),
        ((Ellipsis, [0]), "axis 0 got Ellipsis"),
        (([0.5], [0], [0]), "axis 0 index must be an integer array"),
        (([True, False], [0, 0], [0, 0]), "boolean"),
        (np.zeros((23, 17), bool), "boolean mask must have the array's shape"),
        # Hostile integers: uint64 past int64 (once wrapped to -1, reading the last row), Python
        # integers past int64 (once OverflowError), int64's extremes.
        ((np.array([2**64 - 1], np.uint64), [0], [0]), "index 18446744073709551615 is out of bounds for axis 0"),
        (([0], np.array([2**63], np.uint64), [0]), "index 9223372036854775808 is out of bounds for axis 1"),
        (([2**64 - 1], [0], [0]), "index 18446744073709551615 is out of bounds for axis 0"),
        ((2**63, 0, 0), "index 9223372036854775808 is out of bounds for axis 0"),
        ((0, -2**63 - 1, 0), "index -9223372036854775809 is out of bounds for axis 1"),
        ((0, 0, np.uint64(2**64 - 1)), "index 18446744073709551615 is out of bounds for axis 2"),
        ((np.array([-2**63]), [0], [0]), "index -9223372036854775808 is out of bounds for axis 0"),
        (([0], [0], np.array([2**63 - 1])), "index 9223372036854775807 is out of bounds for axis 2"),
        ((-2**63, 0, 0), "index -9223372036854775808 is out of bounds for axis 0"),
        # Not integers: timedelta64 (once read as integers), objects, ragged lists.
        ((np.array([1], "timedelta64[s]"), [0], [0]), "axis 0 index must be an integer array"),
        (([0], np.array([1, 2], dtype=object), 0), "axis 1 index must be an integer array"),
        (([[1, 2], [3]], 0, 0), "axis 0 index is not a rectangular integer array"),
    ],
    ids=repr,
)
def test_bad_keys_are_clear_errors(case, key, words: str) -> None:
    array, _ = case
    with pytest.raises(zarrdirect.InvalidIndexError) as error:
        array.vindex[key]
    assert words in str(error.value)
    assert isinstance(error.value, IndexError)


def test_reads_only_the_chunks_holding_a_point_each_once(tmp_path) -> None:
    # 4 x 4 x 4 chunks of 8^3; the cache's miss counter counts the chunks decoded.
    data = np.arange(32 ** 3, dtype=np.uint32).reshape(32, 32, 32)
    zarrdirect.save(tmp_path / "a", data, chunks=(8, 8, 8), codec="zstd:1")
    array = zarrdirect.open(tmp_path / "a")
    array.cache_bytes = 64 << 20
    # Seven points (two repeated, one at a negative index) in three chunks: (0,0,0), (1,2,3), (3,3,3).
    key = ([0, 7, 9, 31, 9, 0, -1], [1, 6, 20, 31, 20, 1, -2], [2, 5, 30, 31, 30, 2, -3])
    np.testing.assert_array_equal(array.vindex[key], data[key])
    stats = array.cache_stats()
    assert stats["misses"] == 3 and stats["hits"] == 0
    np.testing.assert_array_equal(array.vindex[key], data[key])
    stats = array.cache_stats()
    assert stats["misses"] == 3 and stats["hits"] == 3


def test_sharded_reads_only_the_inner_chunks_holding_a_point(tmp_path) -> None:
    data = np.arange(32 ** 2, dtype=np.int16).reshape(32, 32)
    zarrdirect.save(tmp_path / "a", data, chunks=(4, 4), shards=(16, 16), codec="zstd:1")
    array = zarrdirect.open(tmp_path / "a")
    array.cache_bytes = 64 << 20
    key = ([0, 3, 5, 31, 17], [0, 2, 5, 31, 30])  # inner chunks (0,0), (0,0), (1,1), (7,7), (4,7)
    np.testing.assert_array_equal(array.vindex[key], data[key])
    assert array.cache_stats()["misses"] == 4


def test_one_dimensional_array(tmp_path) -> None:
    data = np.arange(100, dtype=np.float64)
    zarrdirect.save(tmp_path / "a", data, chunks=(7,))
    array = zarrdirect.open(tmp_path / "a")
    np.testing.assert_array_equal(array.vindex[[99, 0, -5, 3, 3]], data[[99, 0, -5, 3, 3]])
    mask = data % 3 == 0
    np.testing.assert_array_equal(array.vindex[mask], data[mask])


@pytest.mark.skipif(not zarrdirect.cuda_available(), reason="no usable CUDA device")
def test_device_matches_host(case) -> None:
    array, data = case
    rng = np.random.default_rng(5)
    for count in (1, 50):
        key = _random_points(rng, count)
        got = array.vindex.cuda[key]
        assert tuple(got.shape) == data[key].shape
        np.testing.assert_array_equal(got.get(), data[key])
    key = (np.array([[0], [4], [-1]]), np.array([[1, 2, 3, 16]]), 7)
    got = array.vindex.cuda[key]
    assert tuple(got.shape) == (3, 4)
    np.testing.assert_array_equal(got.get(), data[key])
    empty = np.array([], dtype=np.int64)
    assert tuple(array.vindex.cuda[empty, empty, empty].shape) == (0,)
    with pytest.raises(zarrdirect.InvalidIndexError, match="out of bounds for axis 0"):
        array.vindex.cuda[[23], [0], [0]]
