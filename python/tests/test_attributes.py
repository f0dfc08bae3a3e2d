"""``arr.attrs``: a mapping whose changes are saved at once (zarr.json or .zattrs), read back by
zarrdirect and by zarr-python 2; refused on arrays opened read-only."""

from __future__ import annotations

import json
import threading

import pytest

import zarrdirect


def test_v3_changes_are_saved_at_once_and_keep_the_rest_of_zarr_json(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(4, 6), dtype="u2", chunks=(2, 3), attributes={"unit": "nm"},
                            dimension_names=["y", "x"])
    before = json.loads((tmp_path / "a" / "zarr.json").read_text())
    arr.attrs["scale"] = [0.5, 0.25]
    assert zarrdirect.open(tmp_path / "a").attrs == {"unit": "nm", "scale": [0.5, 0.25]}
    arr.attrs.update({"unit": "um", "n": 3}, extra={"deep": [1, {"x": None}]})
    del arr.attrs["scale"]
    expected = {"unit": "um", "n": 3, "extra": {"deep": [1, {"x": None}]}}
    assert arr.attrs == expected and arr.attrs.asdict() == expected
    assert zarrdirect.open(tmp_path / "a").attrs.asdict() == expected
    after = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert after.pop("attributes") == expected
    before.pop("attributes")
    assert after == before
    with pytest.raises(KeyError):
        del arr.attrs["scale"]
    # Values are copies: editing one saves nothing until it is assigned back.
    extra = arr.attrs["extra"]
    extra["deep"].append(2)
    assert arr.attrs["extra"] == {"deep": [1, {"x": None}]}
    arr.attrs["extra"] = extra
    assert zarrdirect.open(tmp_path / "a").attrs["extra"] == {"deep": [1, {"x": None}, 2]}
    arr.attrs.put({"only": True})
    assert zarrdirect.open(tmp_path / "a").attrs == {"only": True}
    arr.attrs.clear()
    assert len(zarrdirect.open(tmp_path / "a").attrs) == 0
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["zarr.json"]


def test_v2_attributes_read_back_through_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    arr = zarrdirect.create(tmp_path / "a", shape=(6,), dtype="i4", chunks=3, zarr_format=2)
    arr.attrs["made_by"] = "zarrdirect"
    arr.attrs.update(version=2, axes=["x"])
    theirs = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert theirs.attrs.asdict() == {"made_by": "zarrdirect", "version": 2, "axes": ["x"]}
    # zarr-python's changes are what a later zarrdirect change starts from.
    zarr.open_array(str(tmp_path / "a"), mode="r+").attrs["by_zarr"] = 1
    reopened = zarrdirect.open(tmp_path / "a", mode="r+")
    reopened.attrs["after"] = "yes"
    assert zarr.open_array(str(tmp_path / "a"), mode="r").attrs.asdict() == {
        "made_by": "zarrdirect", "version": 2, "axes": ["x"], "by_zarr": 1, "after": "yes"}


def test_nan_attributes_written_by_zarr_python_survive_a_change(tmp_path):
    # zarr-python 2 writes NaN bare in .zattrs (xarray's _FillValue); a change through zarrdirect
    # refused the file as "not valid JSON", and zarrdirect.convert-style copies wrote null.
    zarr = pytest.importorskip("zarr")
    theirs = zarr.open_array(str(tmp_path / "a"), mode="w", shape=(4,), chunks=(2,), dtype="f8")
    theirs.attrs.update(_FillValue=float("nan"), hi=float("inf"))
    arr = zarrdirect.open(tmp_path / "a", mode="r+")
    arr.attrs["units"] = "\u00b5m"  # zarr-python 2.13 reads .zattrs as ASCII: written escaped
    back = zarr.open_array(str(tmp_path / "a"), mode="r").attrs.asdict()
    assert back["units"] == "\u00b5m" and back["hi"] == float("inf") and back["_FillValue"] != back["_FillValue"]
    made = zarrdirect.create(tmp_path / "b", shape=(2,), dtype="u1", chunks=2, zarr_format=2,
                             attributes={"name": "\u00e9t\u00e9"})
    assert zarr.open_array(str(tmp_path / "b"), mode="r").attrs["name"] == "\u00e9t\u00e9"
    assert made.attrs["name"] == "\u00e9t\u00e9"

def test_attributes_nested_deeper_than_readable_are_refused_and_the_array_stays_readable(tmp_path):
    # They were saved, and zarr.json then failed to open ("JSON nests deeper than 512 levels").
    deep = 0
    for _ in range(600):
        deep = [deep]
    arr = zarrdirect.create(tmp_path / "a", shape=(2,), dtype="u1", chunks=2)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="512"):
        arr.attrs["deep"] = deep
    assert zarrdirect.open(tmp_path / "a").attrs == {}
    with pytest.raises(zarrdirect.InvalidArgumentError, match="512"):
        zarrdirect.create(tmp_path / "b", shape=(2,), dtype="u1", attributes={"deep": deep})
    assert not (tmp_path / "b" / "zarr.json").exists()

def test_read_only_arrays_refuse_changes(tmp_path):
    zarrdirect.create(tmp_path / "a", shape=(4,), dtype="u1", chunks=2, attributes={"k": 1})
    for arr in (zarrdirect.open(tmp_path / "a"), zarrdirect.open(tmp_path / "a", mode="r")):
        assert arr.attrs.read_only and arr.read_only
        with pytest.raises(zarrdirect.InvalidArgumentError, match="mode='r\\+'"):
            arr.attrs["k"] = 2
        with pytest.raises(zarrdirect.InvalidArgumentError):
            del arr.attrs["k"]
        with pytest.raises(zarrdirect.InvalidArgumentError):
            arr.attrs.update(k=3)
    assert not zarrdirect.open(tmp_path / "a", mode="r+").read_only
    assert json.loads((tmp_path / "a" / "zarr.json").read_text())["attributes"] == {"k": 1}


def test_values_that_are_not_json_are_refused_and_nothing_changes(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(4,), dtype="u1", chunks=2, attributes={"k": 1})
    with pytest.raises(zarrdirect.InvalidArgumentError):
        arr.attrs["bad"] = object()
    with pytest.raises(zarrdirect.InvalidArgumentError):
        arr.attrs["nan"] = float("nan")
    with pytest.raises(TypeError):
        arr.attrs[3] = "x"
    assert zarrdirect.open(tmp_path / "a").attrs == {"k": 1}


def test_threads_setting_different_keys_lose_nothing(tmp_path):
    zarrdirect.create(tmp_path / "a", shape=(4,), dtype="u1", chunks=2)

    def edit(t):
        mine = zarrdirect.open(tmp_path / "a", mode="r+")
        for i in range(10):
            mine.attrs[f"t{t}_{i}"] = i

    threads = [threading.Thread(target=edit, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(zarrdirect.open(tmp_path / "a").attrs) == 40


def test_dict_methods_save_and_attrs_serialize_as_a_dict(tmp_path):
    arr = zarrdirect.create(tmp_path / "a", shape=(4,), dtype="u1", chunks=2, attributes={"a": 1, "b": [2]})
    attrs = arr.attrs
    assert isinstance(attrs, dict) and json.loads(json.dumps(attrs)) == {"a": 1, "b": [2]}
    assert attrs.pop("a") == 1 and attrs.pop("missing", "d") == "d"
    assert attrs.setdefault("c", {"x": 1}) == {"x": 1} and attrs.setdefault("c", 5) == {"x": 1}
    attrs |= {"e": "f"}
    with pytest.raises(KeyError):
        attrs.pop("missing")
    assert attrs == {"b": [2], "c": {"x": 1}, "e": "f"}
    assert zarrdirect.open(tmp_path / "a").attrs == {"b": [2], "c": {"x": 1}, "e": "f"}
    read_only = zarrdirect.open(tmp_path / "a").attrs
    for change in (lambda: read_only.pop("b"), lambda: read_only.setdefault("z", 1), read_only.clear,
                   lambda: read_only.popitem()):
        with pytest.raises(zarrdirect.InvalidArgumentError):
            change()
    assert zarrdirect.open(tmp_path / "a").attrs == {"b": [2], "c": {"x": 1}, "e": "f"}
