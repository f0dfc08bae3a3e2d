"""The conformance corpus (arrays written by tensorstore, zarr-python 2 and 3) read through the
Python API into host memory must equal the values NumPy saved beside each of them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import assert_same, case_id, conformance_cases, read_case

CASES = conformance_cases()
ARRAY_CASES = [case for case in CASES if (case / "array").is_dir()]
GROUP_CASES = [case for case in CASES if (case / "group").is_dir()]


def middle(shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The middle half of every dimension: cuts through chunk boundaries."""
    return tuple(slice(n // 4, n - n // 4) for n in shape)


@pytest.mark.parametrize("case", ARRAY_CASES, ids=case_id)
def test_whole_array(case: Path) -> None:
    expected = np.load(case / "expected.npy")
    array = zarrdirect.open(case / "array")
    assert array.shape == expected.shape
    assert array.dtype == expected.dtype.newbyteorder("=")
    assert_same(read_case(case, array.read), expected)


@pytest.mark.parametrize("case", ARRAY_CASES, ids=case_id)
def test_regions_and_indexing(case: Path) -> None:
    expected = np.load(case / "expected.npy")
    array = zarrdirect.open(case / "array")
    box = middle(expected.shape)
    assert_same(read_case(case, array.read, box), expected[box])
    assert_same(array[box], expected[box])
    if expected.ndim == 0:
        assert array[()] == expected[()] or (np.isnan(array[()]) and np.isnan(expected[()]))
        assert_same(array[...], expected[...])
        return
    # An integer drops its dimension, a negative one counts from the end, Ellipsis fills in.
    assert_same(array[-1], expected[-1])
    assert_same(array[..., 0], expected[..., 0])
    assert_same(array[box[0], ...], expected[box[0], ...])
    text = ",".join(f"{s.start}:{s.stop}" for s in box[:-1]) + ("," if expected.ndim > 1 else "") + "-1"
    assert_same(array.read(text), expected[box[:-1] + (-1,)])
    corner = tuple(n - 1 for n in expected.shape)
    value = array[corner]
    assert np.isscalar(value) and value.dtype == array.dtype
    np.testing.assert_array_equal(value, expected[corner])


@pytest.mark.parametrize("case", ARRAY_CASES, ids=case_id)
def test_read_into_a_strided_numpy_array(case: Path) -> None:
    expected = np.load(case / "expected.npy")
    array = zarrdirect.open(case / "array")
    # A Fortran-ordered destination: every chunk lands through the strided path.
    out = np.zeros(expected.shape, dtype=array.dtype, order="F")
    assert read_case(case, array.read, out=out) is out
    assert_same(out, expected)


@pytest.mark.parametrize("case", GROUP_CASES, ids=case_id)
def test_multiscale_levels(case: Path) -> None:
    image = zarrdirect.open_multiscale(case / "group")
    description = json.loads((case / "case.json").read_text())
    assert [list(level["shape"]) for level in image.levels] == description["levels"]
    for index in range(len(image.levels)):
        expected = np.load(case / f"expected_level{index}.npy")
        assert_same(read_case(case, image.read, level=index), expected)
        assert_same(image.level(index)[1:, ..., 2:-2], expected[1:, ..., 2:-2])


def test_every_case_was_seen() -> None:
    """The corpus is read through folders named array/ or group/; anything else is a new layout
    these tests would silently skip."""
    for case in CASES:
        assert (case / "array").is_dir() or (case / "group").is_dir(), case
