"""NumPy-style indexing and region strings mean what they mean in NumPy, or fail clearly."""

from __future__ import annotations

import numpy as np
import pytest
import zarrdirect
from conftest import write_v2_array

DATA = np.arange(7 * 9 * 11, dtype=np.int32).reshape(7, 9, 11)


@pytest.fixture(scope="module")
def array(tmp_path_factory) -> zarrdirect.Array:
    path = tmp_path_factory.mktemp("indexing") / "a.zarr"
    return zarrdirect.open(write_v2_array(path, DATA, (3, 4, 5)))


KEYS = [
    (), Ellipsis, 0, -1, 6, slice(None), slice(2, 5), slice(-3, None), slice(None, -2), slice(5, 2),
    slice(-100, 100), (1, 2), (1, 2, 3), (-1, -1, -1), (slice(1, 3), 4), (Ellipsis, 3), (2, Ellipsis),
    (2, Ellipsis, 3), (slice(1, 6), slice(None), 5), (None, 1), (1, None, slice(2, 4)), (Ellipsis, None),
    (np.int64(2), np.uint8(3)), (slice(np.int64(1), np.int32(4)),), (slice(0, 0), 1), (slice(2, 4, 1),),
    # Steps past int64 pick the start alone, as in NumPy (they failed as a pybind11 cast error).
    slice(None, None, 2**64), slice(None, None, -2**70), (0, slice(3, None, 2**63)), (1, slice(None), slice(2, 0, -2**80)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_matches_numpy(array: zarrdirect.Array, key) -> None:
    got = array[key]
    expected = DATA[key]
    assert type(got) is type(expected), (type(got), type(expected))
    np.testing.assert_array_equal(got, expected)
    assert np.shape(got) == np.shape(expected)


@pytest.mark.parametrize(
    "text, key",
    [("", ()), ("1:3", (slice(1, 3),)), ("1:3,:,5", (slice(1, 3), slice(None), 5)), ("-1", (-1,)),
     ("...,2", (Ellipsis, 2)), (" 0 : 2 , 4 ", (slice(0, 2), 4)), ("::", (slice(None),)), ("2:", (slice(2, None),))],
)
def test_region_strings(array: zarrdirect.Array, text: str, key) -> None:
    np.testing.assert_array_equal(array.read(text), DATA[key])
    np.testing.assert_array_equal(array.read(key), DATA[key])


def test_read_returns_arrays_even_for_single_elements(array: zarrdirect.Array) -> None:
    got = array.read((1, 2, 3))
    assert isinstance(got, np.ndarray) and got.shape == () and got[()] == DATA[1, 2, 3]


@pytest.mark.parametrize(
    "key, words",
    [
        (slice(0, 5, 0), "step cannot be zero"), ((None, [0, 1], [0, 1]), "oindex"),
        (([0, 1], None), "vindex"), (True, "fancy"), ((0, 0, 0, 0), "too many indices"), (7, "out of bounds"),
        (-8, "out of bounds"), ((0, 9), "axis 1 with size 9"), ((Ellipsis, Ellipsis), "single ellipsis"),
        (1.5, "fancy"), (slice(1.0, 2), "not an integer"), ("0:2", "fancy"),
    ],
    ids=repr,
)
def test_refused_with_a_clear_message(array: zarrdirect.Array, key, words: str) -> None:
    with pytest.raises(IndexError, match=words) as caught:
        array[key]
    assert isinstance(caught.value, zarrdirect.InvalidIndexError)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(IndexError):
        array.cuda[key]  # refused before any GPU work


# "1_0" and "\u0661" (an Arabic-Indic 1) passed Python's int(); the CLI refuses them.
@pytest.mark.parametrize("text", ["1:x", "a", "1:2:3:4", "1,,2", "0:2:0", "1_0", "\u0661", "0:\u0662", " 1 2 "])
def test_bad_region_strings(array: zarrdirect.Array, text: str) -> None:
    with pytest.raises(zarrdirect.InvalidIndexError):
        array.read(text)


def test_numpy_protocol_and_metadata(array: zarrdirect.Array) -> None:
    np.testing.assert_array_equal(np.asarray(array), DATA)
    assert np.asarray(array, dtype=np.float64).dtype == np.float64
    # NumPy 2 passes copy=; copy=False (never copy) cannot be met by a read, as in zarr-python.
    np.testing.assert_array_equal(array.__array__(copy=True), DATA)
    with pytest.raises(ValueError, match="copy=False"):
        array.__array__(copy=False)
    assert len(array) == 7 and array.ndim == 3 and array.size == DATA.size
    assert array.shape == (7, 9, 11) and array.chunks == (3, 4, 5)
    assert array.dtype == np.dtype(np.int32) and array.nbytes == DATA.nbytes
    assert array.zarr_format == 2 and array.fill_value == 0 and isinstance(array.fill_value, np.int32)
    info = array.info
    assert info["chunks_total"] == 3 * 3 * 3 and info["dtype"] == "int32" and info["path"] == array.path
    assert info["chunks_stored"] == 3 * 3 * 3 and array.nbytes_stored == info["bytes_stored"] > 0
    assert "zarr.Array" not in repr(array) and "shape=(7, 9, 11)" in repr(array)


def test_info_is_the_clis_json(array: zarrdirect.Array) -> None:
    """One schema for both front ends: Array.info equals `zarrdirect info --json`."""
    import json
    import subprocess
    from pathlib import Path

    cli = Path(zarrdirect.__file__).resolve().parents[2] / "zarrdirect"
    if not cli.exists():
        pytest.skip("the CLI is not beside this package (an installed package has none)")
    printed = json.loads(subprocess.run([str(cli), "info", "--json", array.path], check=True,
                                        capture_output=True, text=True).stdout)
    assert printed == array.info
