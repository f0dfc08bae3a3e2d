"""Groups and OME-Zarr images through the Python API: v2 (0.4) and v3 (0.5), consolidated or not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import conformance_dir, write_v3_array

LEVEL0 = np.arange(2 * 8 * 12, dtype=np.uint16).reshape(2, 8, 12)
LEVEL1 = LEVEL0[:, ::2, ::2].copy()


def ome05(path: Path, consolidated: bool) -> Path:
    """An OME-Zarr 0.5 image: a v3 group with attributes.ome.multiscales, two levels."""
    write_v3_array(path / "s0", LEVEL0, (1, 4, 5))
    write_v3_array(path / "s1", LEVEL1, (1, 4, 4), attributes={"level": 1})
    (path / "labels").mkdir()
    (path / "labels" / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}))
    ome = {"version": "0.5", "multiscales": [{
        "name": "cells",
        "axes": [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
                 {"name": "x", "type": "space", "unit": "micrometer"}],
        "datasets": [
            {"path": "s0", "coordinateTransformations": [{"type": "scale", "scale": [1, 0.5, 0.5]}]},
            {"path": "s1", "coordinateTransformations": [{"type": "scale", "scale": [1, 1, 1]},
                                                          {"type": "translation", "translation": [0, 0.25, 0.25]}]},
        ],
    }]}
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {"ome": ome}}
    if consolidated:
        members = {name: json.loads((path / name / "zarr.json").read_text()) for name in ("s0", "s1", "labels")}
        doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": members}
    (path / "zarr.json").write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("consolidated", [False, True])
def test_ome_05(tmp_path, consolidated: bool) -> None:
    image = zarrdirect.open_multiscale(ome05(tmp_path / "img.zarr", consolidated))
    assert image.version == "0.5" and image.name == "cells" and len(image) == 2
    assert [axis["name"] for axis in image.axes] == ["c", "y", "x"]
    assert image.axes[0]["unit"] is None and image.axes[1]["unit"] == "micrometer"
    levels = image.levels
    assert [level["path"] for level in levels] == ["s0", "s1"]
    assert levels[0]["shape"] == LEVEL0.shape and levels[1]["shape"] == LEVEL1.shape
    assert levels[0]["dtype"] == np.uint16 and levels[0]["chunks"] == (1, 4, 5)
    assert levels[0]["scale"] == [1, 0.5, 0.5] and levels[0]["translation"] is None
    assert levels[1]["translation"] == [0, 0.25, 0.25]
    np.testing.assert_array_equal(image.read(), LEVEL0)
    np.testing.assert_array_equal(image.read(level=1, region=(0, slice(1, 3))), LEVEL1[0, 1:3])
    np.testing.assert_array_equal(image.read(-1), LEVEL1)
    np.testing.assert_array_equal(image[1][..., 0], LEVEL1[..., 0])
    assert image.level(1).attrs == {"level": 1}
    with pytest.raises(zarrdirect.InvalidArgumentError, match="2 levels"):
        image.level(2)

    group = zarrdirect.open_group(tmp_path / "img.zarr")
    assert group.consolidated is consolidated and group.zarr_format == 3
    assert group.members() == ["labels", "s0", "s1"]
    assert list(group.group_keys()) == ["labels"] and isinstance(group["labels"], zarrdirect.Group)
    assert group.attrs["ome"]["version"] == "0.5"
    np.testing.assert_array_equal(group["s1"][1], LEVEL1[1])

    with pytest.raises(ValueError, match="open_multiscale") as caught:
        zarrdirect.open(tmp_path / "img.zarr")
    assert "s0" in str(caught.value)


def test_consolidated_levels_come_from_the_document(tmp_path) -> None:
    """Levels are described from consolidated metadata without reading each level's file: a
    level whose own zarr.json is gone still lists (and only fails once it is opened)."""
    path = ome05(tmp_path / "img.zarr", consolidated=True)
    (path / "s1" / "zarr.json").unlink()
    image = zarrdirect.open_multiscale(path)
    assert image.levels[1]["shape"] == LEVEL1.shape
    with pytest.raises(FileNotFoundError):
        image.level(1)


def test_ome_04_written_by_zarr_python(tmp_path) -> None:
    zarr = pytest.importorskip("zarr")
    root = zarr.group(store=str(tmp_path / "img.zarr"))
    root.create_dataset("0", data=LEVEL0, chunks=(1, 4, 4))
    root.create_dataset("1", data=LEVEL1, chunks=(1, 4, 4))
    root.attrs["multiscales"] = [{
        "version": "0.4", "axes": ["c", "y", "x"],
        "datasets": [{"path": "0"}, {"path": "1"}],
    }]
    image = zarrdirect.open_multiscale(tmp_path / "img.zarr")
    assert image.version == "0.4" and [a["name"] for a in image.axes] == ["c", "y", "x"]
    assert image.levels[1]["scale"] is None
    np.testing.assert_array_equal(image.read(level=1), LEVEL1)
    assert not image.group.consolidated
    zarr.consolidate_metadata(str(tmp_path / "img.zarr"))
    assert zarrdirect.open_multiscale(tmp_path / "img.zarr").group.consolidated


def test_conformance_pyramid_is_consolidated() -> None:
    path = conformance_dir() / "zarr-python-2" / "zp2_ome_pyramid" / "group"
    if not path.is_dir():
        pytest.skip("conformance corpus not found")
    image = zarrdirect.open_multiscale(path)
    assert image.group.consolidated and image.version == "0.4"
    assert [level["shape"] for level in image.levels] == [(2, 32, 64, 48), (2, 16, 32, 24), (2, 8, 16, 12)]
    np.testing.assert_array_equal(image.read(2), np.load(path.parent / "expected_level2.npy"))
    assert "zp2_ome_pyramid" in repr(image)
