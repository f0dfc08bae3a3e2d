"""Attributes nested as deep as the metadata parser accepts convert to Python without a
RecursionError (Array.attrs, Group.attrs, Multiscale.attrs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import write_v2_array, write_v3_array


def nested_text(depth: int) -> str:
    """`depth` containers, alternating list and object, around 1: [{"k": [{"k": ... 1 ...}]}]."""
    opening = "".join('[' if level % 2 == 0 else '{"k": ' for level in range(depth))
    closing = "".join(']' if level % 2 == 0 else '}' for level in reversed(range(depth)))
    return opening + "1" + closing


def depth_of(value) -> int:
    """How many containers wrap the innermost value, counted without recursion."""
    depth = 0
    while isinstance(value, (list, dict)):
        value = value[0] if isinstance(value, list) else value["k"]
        depth += 1
    assert value == 1
    return depth


def v3_array_with_attributes(path: Path, depth: int) -> Path:
    write_v3_array(path, np.zeros(2, "u1"), (2,))
    text = (path / "zarr.json").read_text()
    # Written as text: json.dumps of such a value would recurse.
    (path / "zarr.json").write_text(text.replace('"attributes": {}', f'"attributes": {{"deep": {nested_text(depth)}}}'))
    return path


def deepest_accepted(make) -> int:
    """The deepest attribute nesting the library opens, `make(depth)` writing the array, found by
    bisection: the test follows the library's limit wherever it is set (src/metadata)."""
    low, high = 1, 1 << 16  # low opens; high is refused
    with pytest.raises(zarrdirect.InvalidMetadataError, match="deeper"):
        zarrdirect.open(make(high))
    while high - low > 1:
        middle = (low + high) // 2
        try:
            zarrdirect.open(make(middle))
            low = middle
        except zarrdirect.InvalidMetadataError as error:
            assert "deeper" in str(error)
            high = middle
    return low


def test_attributes_at_the_depth_limit(tmp_path) -> None:
    depth = deepest_accepted(lambda depth: v3_array_with_attributes(tmp_path / f"probe-{depth}", depth))
    assert depth >= 500  # "a few hundred" levels: what the issue found failing

    array = zarrdirect.open(v3_array_with_attributes(tmp_path / "a.zarr", depth))
    attrs = array.attrs
    assert depth_of(attrs["deep"]) == depth
    assert depth_of(array.attrs["deep"]) == depth  # a fresh copy each time
    attrs["deep"].clear()
    assert depth_of(array.attrs["deep"]) == depth

    group_path = tmp_path / "g.zarr"
    group_path.mkdir()
    (group_path / "zarr.json").write_text(
        '{"zarr_format": 3, "node_type": "group", "attributes": {"deep": ' + nested_text(depth) + "}}")
    assert depth_of(zarrdirect.open_group(group_path).attrs["deep"]) == depth


def test_deep_v2_attributes(tmp_path) -> None:
    path = write_v2_array(tmp_path / "a.zarr", np.zeros(2, "u1"), (2,))

    def make(depth: int) -> Path:
        (path / ".zattrs").write_text('{"deep": ' + nested_text(depth) + "}")
        return path

    depth = deepest_accepted(make)
    assert depth >= 500
    assert depth_of(zarrdirect.open(make(depth)).attrs["deep"]) == depth


def test_attribute_values_survive_conversion(tmp_path) -> None:
    """The iterative conversion keeps every JSON type and the order of keys and items."""
    attributes = {"b": [1, -2, 2**63 + 5, 1.5, "x\u00e9", True, False, None, {}, []], "a": {"z": 1, "y": [{"q": None}]}}
    path = write_v3_array(tmp_path / "a.zarr", np.zeros(2, "u1"), (2,), attributes=attributes)
    got = zarrdirect.open(path).attrs
    assert got == attributes
    assert list(got) == sorted(attributes) and list(got["a"]) == sorted(attributes["a"])
    assert type(got["b"][2]) is int and type(got["b"][3]) is float and got["b"][5] is True
    assert json.loads(json.dumps(got)) == attributes
