"""Writes to steps, index arrays, masks and points: the array ends as NumPy's assignment into a
copy would leave it, elements outside the selection untouched, and other writers (zarr-python)
read the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarrdirect

SHAPE = (7, 9, 11)
START = np.arange(np.prod(SHAPE), dtype=np.int32).reshape(SHAPE)


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def array(request, tmp_path) -> zarrdirect.WritableArray:
    created = zarrdirect.create(tmp_path / "a.zarr", shape=SHAPE, dtype="int32", chunks=(3, 4, 5),
                                zarr_format=request.param, **({"codec": "zstd"} if request.param == 3 else {}))
    created[...] = START
    return zarrdirect.open(tmp_path / "a.zarr", mode="r+")


MASK = (START % 5) == 1
ROWS = np.array([True, False, False, True, True, False, True])

ASSIGNMENTS = {
    "steps": ((slice(None, None, 2), slice(1, 8, 3)), lambda shape: np.full(shape, -1)),
    "negative step": ((slice(None, None, -3), 4), lambda shape: np.arange(np.prod(shape)).reshape(shape)),
    "index list": ([5, 0, 2], lambda shape: np.arange(np.prod(shape)).reshape(shape) * 7),
    "repeated index, last wins": (([1, 1, 1], slice(0, 2)), lambda shape: np.arange(np.prod(shape)).reshape(shape)),
    "row mask": (ROWS, lambda shape: -5),
    "index array among slices": ((slice(2, 6), [8, 0, 3], slice(None, None, 4)), lambda shape: 99),
    "numpy moves the array first": ((2, slice(1, 7), [10, 0]), lambda shape: np.arange(np.prod(shape)).reshape(shape)),
    "points": (([0, 6, 3], [8, 1, 4], [10, 0, 5]), lambda shape: [11, 22, 33]),
    "broadcast points": ((np.array([[0], [6]]), np.array([1, 2, 3]), 4), lambda shape: -8),
    "mask": (MASK, lambda shape: np.arange(np.prod(shape)) - 1000),
    "empty": (([],), lambda shape: 5),
    "two arrays among slices (through their box)": ((slice(None), [8, 0, 8], [[10], [2]]),
                                                    lambda shape: np.arange(np.prod(shape)).reshape(shape)),
    "mask beside an array (through their box)": ((ROWS, [3], slice(None, None, -2)), lambda shape: -9),
}


@pytest.mark.parametrize("name", list(ASSIGNMENTS))
def test_setitem_matches_numpy(array: zarrdirect.WritableArray, name: str) -> None:
    key, make_value = ASSIGNMENTS[name]
    expected = START.copy()
    value = make_value(expected[key].shape)
    expected[key] = value
    array[key] = value
    np.testing.assert_array_equal(array[...], expected)
    np.testing.assert_array_equal(zarrdirect.open(array.path)[...], expected)  # a fresh handle, no cache


def test_oindex_and_vindex_assignment(array: zarrdirect.WritableArray) -> None:
    expected = START.copy()
    array.oindex[[6, 0], :, ROWS.nonzero()[0]] = 3
    expected[np.ix_([6, 0], range(9), ROWS.nonzero()[0])] = 3
    array.vindex[[1, 2], [3, 4], [5, 6]] = [-1, -2]
    expected[[1, 2], [3, 4], [5, 6]] = [-1, -2]
    array.set_mask_selection(MASK, 0)
    expected[MASK] = 0
    array.set_orthogonal_selection((slice(None), [0]), 12)
    expected[:, [0]] = 12
    array.set_basic_selection((slice(None, None, 5),), 4)
    expected[::5] = 4
    np.testing.assert_array_equal(array[...], expected)


def test_zarr_python_reads_the_scattered_write(array: zarrdirect.WritableArray) -> None:
    if array.zarr_format != 2:
        pytest.skip("zarr-python 2 reads Zarr v2")
    zarr = pytest.importorskip("zarr")
    array[::2, [1, 5], 3] = 77
    expected = START.copy()
    expected[::2, [1, 5], 3] = 77
    np.testing.assert_array_equal(zarr.open(str(array.path), mode="r")[...], expected)


@pytest.mark.parametrize(
    "key, value, words",
    [((slice(None, None, 2),), np.zeros((3, 9, 11)), "cannot be written to a selection of shape"),
     (([0, 1], [2, 3], [4, 5]), [1, 2, 3], "cannot be written"),
     (([0, 9],), 0, "out of bounds"), (([0, 1], None), 0, "oindex"),
     ((slice(None), [0, 1], [0, 1]), np.zeros((3, 3)), "could not be broadcast")],
    ids=["shape", "points shape", "bounds", "mix", "box shape"],
)
def test_bad_assignments_change_nothing(array: zarrdirect.WritableArray, key, value, words: str) -> None:
    with pytest.raises((IndexError, ValueError), match=words):
        array[key] = value
    np.testing.assert_array_equal(array[...], START)


def test_read_only_and_device_indexers_refuse(array: zarrdirect.WritableArray) -> None:
    reader = zarrdirect.open(array.path)
    for assign in (lambda: reader.__setitem__((slice(None, None, 2),), 1),
                   lambda: reader.oindex.__setitem__(([0],), 1), lambda: reader.vindex.__setitem__(([0], [0], [0]), 1)):
        with pytest.raises(zarrdirect.InvalidArgumentError, match="mode='r\\+'"):
            assign()
    with pytest.raises(zarrdirect.InvalidArgumentError, match="boxes only"):
        array.oindex.cuda[[0]] = 1
    np.testing.assert_array_equal(array[...], START)


def test_only_chunks_holding_a_selected_element_are_rewritten(array: zarrdirect.WritableArray) -> None:
    def stored_files() -> dict:
        return {p.relative_to(array.path): p.stat().st_ino for p in Path(array.path).rglob("*")
                if p.is_file() and not p.name.startswith((".z", "zarr.json"))}

    before = stored_files()
    array[[0, 6], 1, ::5] = -3  # rows 0 and 6: chunk rows 0 and 2 of the (3, 4, 5) grid
    after = stored_files()
    assert before.keys() == after.keys()
    changed = {key for key in before if before[key] != after[key]}
    # Chunk rows 0 and 2, chunk column 0 (y = 1), every x chunk (x = 0, 5, 10): six chunks.
    assert len(changed) == 6, sorted(map(str, changed))
    expected = START.copy()
    expected[[0, 6], 1, ::5] = -3
    np.testing.assert_array_equal(array[...], expected)
