"""What users of zarr-python 2 reach for on Array and Group, compared with zarr-python 2 itself on
the same files (Debian's python3-zarr), plus the v3 answers, which zarr-python 2 cannot give."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import write_v2_array, write_v3_array

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

DATA = np.arange(20 * 30, dtype="<i4").reshape(20, 30)


def config_of(codec) -> dict | None:
    return None if codec is None else codec.get_config()


V2_CODECS = {
    "zstd": dict(compressor=lambda: numcodecs.Zstd(level=1), filters=lambda: None),
    "blosc": dict(compressor=lambda: numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE),
                  filters=lambda: None),
    "none": dict(compressor=lambda: None, filters=lambda: None),
    "delta-zlib": dict(compressor=lambda: numcodecs.Zlib(level=3), filters=lambda: [numcodecs.Delta(dtype="<i4")]),
    "shuffle-only": dict(compressor=lambda: None, filters=lambda: [numcodecs.Shuffle(elementsize=4)]),
    "delta-shuffle-gzip": dict(compressor=lambda: numcodecs.GZip(level=5),
                               filters=lambda: [numcodecs.Delta(dtype="<i4"), numcodecs.Shuffle(elementsize=4)]),
}


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("codecs", list(V2_CODECS), ids=list(V2_CODECS))
def test_v2_codecs_and_order_match_zarr_python(tmp_path, codecs, order) -> None:
    spec = V2_CODECS[codecs]
    path = str(tmp_path / "a.zarr")
    reference = zarr.open(path, mode="w", shape=DATA.shape, chunks=(7, 11), dtype=DATA.dtype, order=order,
                          compressor=spec["compressor"](), filters=spec["filters"]())
    reference[:] = DATA
    reference = zarr.open(path, mode="r")
    array = zarrdirect.open(path)
    assert array.compressor == config_of(reference.compressor)
    expected_filters = None if reference.filters is None else [f.get_config() for f in reference.filters]
    assert array.filters == expected_filters
    assert array.compressors == (() if reference.compressor is None else (reference.compressor.get_config(),))
    assert array.order == reference.order == order
    assert array.read_only is True
    assert array.itemsize == reference.itemsize == 4
    assert array.nchunks == reference.nchunks == 3 * 3
    assert array.cdata_shape == reference.cdata_shape == (3, 3)
    assert array.name is None and reference.name is None and array.basename is None
    np.testing.assert_array_equal(array[:], DATA)


def test_codec_configs_are_copies(tmp_path) -> None:
    path = str(tmp_path / "a.zarr")
    zarr.open(path, mode="w", shape=(4,), chunks=(2,), dtype="u1", compressor=numcodecs.Zlib(level=1))
    array = zarrdirect.open(path)
    array.compressor["level"] = 9
    assert array.compressor == {"id": "zlib", "level": 1}


def v3_with_codecs(path: Path, codecs: list[dict]) -> zarrdirect.Array:
    write_v3_array(path, DATA, (10, 10))
    doc = json.loads((path / "zarr.json").read_text())
    doc["codecs"] = codecs
    (path / "zarr.json").write_text(json.dumps(doc))
    return zarrdirect.open(path)


def test_v3_compressor_filters_and_order(tmp_path) -> None:
    plain = zarrdirect.open(write_v3_array(tmp_path / "plain", DATA, (10, 10)))
    assert plain.compressor is None and plain.filters is None and plain.compressors == ()
    assert plain.order == "C" and plain.read_only and plain.nchunks == 6 and plain.cdata_shape == (2, 3)

    # Every codec of the chain the engine can decode without writing chunks for it: the chunks
    # written above are plain bytes, so only the description is checked here.
    transposed = v3_with_codecs(tmp_path / "t", [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
    ])
    assert transposed.filters == [{"id": "transpose", "order": [1, 0]}]
    assert transposed.compressor == {"id": "zstd", "level": 3, "checksum": False}
    assert transposed.order == "C"  # reads hand out C order; the transpose is part of the encoding

    two = v3_with_codecs(tmp_path / "two", [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "gzip", "configuration": {"level": 1}},
        {"name": "crc32c"},
    ])
    assert two.compressors == ({"id": "gzip", "level": 1}, {"id": "crc32c"})
    with pytest.raises(TypeError, match="compressors"):
        two.compressor

    numcodecs_named = v3_with_codecs(tmp_path / "n", [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "numcodecs.zlib", "configuration": {"level": 4}},
    ])
    assert numcodecs_named.compressor == {"id": "zlib", "level": 4}


def test_v3_sharded_reports_the_outer_chain(tmp_path) -> None:
    sharded = v3_with_codecs(tmp_path / "s", [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5, 5],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    }}])
    assert sharded.compressor is None and sharded.filters is None


def hierarchy(root: Path):
    """The same v2 hierarchy for zarr-python and zarrdirect: groups, arrays, a nested group."""
    group = zarr.open_group(str(root), mode="w")
    group.create_dataset("baz", shape=(100,), chunks=(10,), dtype="f8")
    group.create_dataset("quux", shape=(20, 30), chunks=(10, 10), dtype="<u2")
    bar = group.create_group("bar")
    bar.create_group("baz")
    deep = bar.create_group("quux")
    deep.create_dataset("baz", shape=(100,), chunks=(10,), dtype="f8")
    deep.create_dataset("inner", shape=(3, 4), chunks=(3, 4), dtype="i1")
    group.create_group("foo")
    group.attrs["title"] = "t"
    return zarr.open_group(str(root), mode="r")


def test_group_iteration_matches_zarr_python(tmp_path) -> None:
    reference = hierarchy(tmp_path / "h.zarr")
    group = zarrdirect.open_group(tmp_path / "h.zarr")

    assert list(group) == list(reference) == ["bar", "baz", "foo", "quux"]
    assert list(group.keys()) == list(reference.keys())
    assert len(group) == len(reference) == 4
    assert list(group.array_keys()) == list(reference.array_keys()) == ["baz", "quux"]
    assert list(group.group_keys()) == list(reference.group_keys()) == ["bar", "foo"]
    assert list(group.array_keys(recurse=True)) == list(reference.array_keys(recurse=True))

    arrays = list(group.arrays())
    assert [name for name, _ in arrays] == [name for name, _ in reference.arrays()]
    assert all(isinstance(node, zarrdirect.Array) for _, node in arrays)
    assert [(name, node.shape) for name, node in group.arrays(recurse=True)] == \
        [(name, node.shape) for name, node in reference.arrays(recurse=True)]
    groups = list(group.groups())
    assert [name for name, _ in groups] == [name for name, _ in reference.groups()]
    assert all(isinstance(node, zarrdirect.Group) for _, node in groups)

    items = list(group.items())
    assert [name for name, _ in items] == [name for name, _ in reference.items()]
    assert [type(node).__name__ for _, node in items] == [type(node).__name__ for _, node in reference.items()]
    assert [type(node).__name__ for node in group.values()] == ["Group", "Array", "Group", "Array"]

    # Generators, as zarr-python's: lazily opening members.
    assert iter(group.arrays()) is not None and not isinstance(group.arrays(), list)


def test_group_names_and_membership_match_zarr_python(tmp_path) -> None:
    reference = hierarchy(tmp_path / "h.zarr")
    group = zarrdirect.open_group(tmp_path / "h.zarr")
    assert group.name == reference.name == "/" and group.basename == reference.basename == ""
    for key in ("bar", "bar/quux", "bar/quux/baz", "quux"):
        assert group[key].name == reference[key].name
        assert group[key].basename == reference[key].basename
    assert group["bar"]["quux/inner"].name == reference["bar"]["quux/inner"].name == "/bar/quux/inner"
    for key in ("bar", "bar/quux/baz", "nothing", "bar/nothing"):
        assert (key in group) == (key in reference)
    assert 3 not in group
    assert group.attrs == dict(reference.attrs) == {"title": "t"}
    assert group.read_only is True
    assert group.get("nothing") is None and group.get("baz").shape == (100,)
    assert group["bar"] == zarrdirect.open_group(tmp_path / "h.zarr")["bar"]
    assert group["bar"] != group["foo"]
    with pytest.raises(KeyError):
        group["nothing"]


def test_tree_matches_zarr_python(tmp_path) -> None:
    reference = hierarchy(tmp_path / "h.zarr")
    group = zarrdirect.open_group(tmp_path / "h.zarr")
    assert repr(group.tree()) == repr(reference.tree())
    assert str(group.tree()) == repr(reference.tree())
    assert bytes(group.tree()) == bytes(reference.tree())
    for level in (0, 1, 2):
        assert repr(group.tree(level=level)) == repr(reference.tree(level=level))
    assert repr(group["bar"].tree()) == repr(reference["bar"].tree())
    assert repr(group["foo"].tree()) == repr(reference["foo"].tree()) == "foo"


def test_tree_of_a_deep_hierarchy(tmp_path) -> None:
    """Drawn without recursion: a hierarchy deeper than the Python stack allowed at the call.
    (The stack is limited instead of the folders being made deeper than the usual limit, which
    would break the clean-up of tmp_path: shutil.rmtree recurses.)"""
    root = tmp_path / "deep.zarr"
    root.mkdir()
    (root / ".zgroup").write_text('{"zarr_format": 2}')
    depth = 200
    node = root
    for _ in range(depth):
        node = node / "g"
        node.mkdir()
        (node / ".zgroup").write_text('{"zarr_format": 2}')
    write_v2_array(node / "a", np.zeros(3, "u1"), (3,))
    tree = zarrdirect.open_group(root).tree()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + depth // 2)
    try:
        text = str(tree)
    finally:
        sys.setrecursionlimit(limit)
    lines = text.splitlines()
    assert len(lines) == depth + 2
    assert lines[-1].endswith("\u2514\u2500\u2500 a (3,) uint8")


def test_v3_group_surface(tmp_path) -> None:
    root = tmp_path / "g.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}))
    write_v3_array(root / "img", DATA, (10, 10))
    (root / "sub").mkdir()
    (root / "sub" / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    group = zarrdirect.open_group(root)
    assert list(group.keys()) == ["img", "sub"]
    assert [name for name, _ in group.arrays()] == ["img"]
    assert [name for name, _ in group.groups()] == ["sub"]
    assert group["img"].name == "/img" and group["img"].itemsize == 4
    assert str(group.tree()) == "/\n \u251c\u2500\u2500 img (20, 30) int32\n \u2514\u2500\u2500 sub"
