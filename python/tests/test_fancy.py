"""arr[key] with index arrays gives what NumPy's advanced indexing gives, or a clear refusal."""

from __future__ import annotations

import numpy as np
import pytest
import zarrdirect
from conftest import write_v2_array

DATA = np.arange(7 * 9 * 11, dtype=np.int32).reshape(7, 9, 11)
MASK_0 = np.array([True, False, True, False, False, True, True])
MASK_ALL = (DATA % 7) == 3


@pytest.fixture(scope="module")
def array(tmp_path_factory) -> zarrdirect.Array:
    path = tmp_path_factory.mktemp("fancy") / "a.zarr"
    return zarrdirect.open(write_v2_array(path, DATA, (3, 4, 5)))


KEYS = [
    [0, 2, 5], [5, 0, 5, -1], np.array([6, 1]), MASK_0, [], np.array([], dtype=np.int64),
    (slice(None), [1, 3]), (slice(1, 5), [8, 0], slice(None, None, 2)), (Ellipsis, [10, 0, 3]),
    (2, [1, 3]), ([1, 3], 2), (slice(None), 4, [0, 10]), (2, slice(None), [1, 3]), ([1, 3], slice(None), 2),
    (2, slice(1, 4), [1, 3]), (0, Ellipsis, [1]), ([0, 6], 8, 10), ([0, 6], [8, 1], [10, 0]),
    (np.array([[0, 1], [2, 3]]), np.array([[1], [2]]), 4), (MASK_0, 3, 2), (1, np.array([True] * 9), 4),
    MASK_ALL, (np.array([0, 6]), np.int64(2), np.uint8(1)), np.array(4), (np.array(-1), [2, 0]),
    # An Ellipsis of no dimensions still separates advanced indices: their dimension goes first
    # (these read with it where the integer stood).
    (slice(None), -8, Ellipsis, [0]), (slice(None, 0, -1), 1, Ellipsis, np.array([8, 5])),
]


@pytest.mark.parametrize("key", KEYS, ids=[f"key{k}" for k in range(len(KEYS))])
def test_matches_numpy(array: zarrdirect.Array, key) -> None:
    expected = DATA[key]
    got = array[key]
    assert type(got) is type(expected)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


# Several index arrays among slices, index arrays of more than one dimension, masks among arrays:
# read as the box holding them, then indexed by NumPy.
BOX_KEYS = [
    (slice(None), [0, 1], [0, 1]), ([[0, 1]], slice(None)), ([[0], [1]], [[1, 2, 3]], slice(None)),
    ([6, 0, 6], slice(1, None, 3), [[10], [-1]]), (MASK_0, [2, 2, 8, 0], slice(None, None, -4)),
    (Ellipsis, [[3, 1]], [4, -2]), ([1, 1, 1], slice(2, 2), [0, 3, 3]), (MASK_0, [1, 2, 3, 4], 0),
    (slice(-7, 7), [1, 4], Ellipsis, [[2], [2]]), (slice(-3, None), np.array([True] * 9), Ellipsis, [-1]),
]


@pytest.mark.parametrize("key", BOX_KEYS, ids=[f"box{k}" for k in range(len(BOX_KEYS))])
def test_general_advanced_indexing_matches_numpy(array: zarrdirect.Array, key) -> None:
    expected = DATA[key]
    got = array[key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_general_advanced_indexing_refuses_a_box_far_larger_than_the_result(tmp_path) -> None:
    big = zarrdirect.create(tmp_path / "big.zarr", shape=(4096, 4096, 2), dtype="uint8", chunks=(512, 512, 2))
    diagonal = np.arange(4096)
    with pytest.raises(zarrdirect.InvalidIndexError, match="oindex.*vindex"):
        big[diagonal, diagonal, :]  # 8,192 elements, from a box of 33 million
    np.testing.assert_array_equal(big.vindex[diagonal, diagonal, 0], np.zeros(4096, dtype=np.uint8))


@pytest.mark.parametrize(
    "key",
    [([0, 1], None), (MASK_ALL[0], slice(None)), (None, [0, 1], [0, 1])],
    ids=["array-and-None", "2d-mask-and-slice", "None-and-arrays"],
)
def test_mixes_numpy_reads_otherwise_are_refused(array: zarrdirect.Array, key) -> None:
    with pytest.raises(zarrdirect.InvalidIndexError, match="oindex.*vindex"):
        array[key]
    with pytest.raises(zarrdirect.InvalidIndexError, match="oindex"):
        array.cuda[(slice(None), [0, 1], [0, 1])]  # the box path reads into host memory only


@pytest.mark.parametrize(
    "key, words",
    [([0, 7], "out of bounds for axis 0"), ((1, [9]), "out of bounds for axis 1"), ([0.5], "integer"),
     (np.ones(6, dtype=bool), "boolean index did not match"), (MASK_ALL[:, :, :3], "boolean index did not match"),
     (np.array([]), "integer"), ((np.array([], dtype=np.float32), 2, 0), "integer"),
     (np.array([1], dtype="m8[s]"), "integer")],
    ids=["past-end", "past-end-axis-1", "float", "short-mask", "mask-shape", "empty-float", "empty-float-points",
         "timedelta"],
)
def test_bad_index_arrays(array: zarrdirect.Array, key, words: str) -> None:
    with pytest.raises(IndexError, match=words):
        array[key]
    with pytest.raises(IndexError, match=words):
        DATA[key]  # NumPy refuses them too


def test_device_reads_match(array: zarrdirect.Array) -> None:
    if not zarrdirect.cuda_available():
        pytest.skip("no CUDA device")
    import cupy

    for key in [[0, 2, 5], (slice(None), [1, 3]), ([0, 6], [8, 1], [10, 0]), MASK_ALL, (2, [1, 3])]:
        np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(array.cuda[key])), DATA[key])
    with pytest.raises(zarrdirect.InvalidIndexError, match="front"):
        array.cuda[2, slice(None), [1, 3]]
