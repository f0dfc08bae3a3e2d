"""OME-Zarr images: multiscale-level coordinateTransformations (NGFF 0.4 in a v2 group's .zattrs,
0.5 in a v3 group's attributes.ome), malformed transformations, the levels as a sequence, and
zarrdirect.open on an image."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrdirect
from conftest import write_v2_array, write_v3_array

LEVEL0 = np.arange(8 * 12, dtype=np.uint16).reshape(8, 12)
LEVEL1 = LEVEL0[::2, ::2].copy()
AXES = [{"name": "y", "type": "space", "unit": "micrometer"}, {"name": "x", "type": "space", "unit": "micrometer"}]
DATASETS = [
    {"path": "s0", "coordinateTransformations": [{"type": "scale", "scale": [0.5, 0.25]}]},
    {"path": "s1", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 0.5]},
                                                 {"type": "translation", "translation": [0.25, 0.125]}]},
]
# Applied after each dataset's own: scale (2, 4), then translation (10, 20).
WHOLE = [{"type": "scale", "scale": [2, 4]}, {"type": "translation", "translation": [10, 20]}]


def multiscale(whole: list | object | None = WHOLE) -> dict:
    doc = {"name": "img", "axes": AXES, "datasets": DATASETS}
    if whole is not None:
        doc["coordinateTransformations"] = whole
    return doc


def ome04(path: Path, whole: list | object | None = WHOLE) -> Path:
    """NGFF 0.4: a v2 group, "multiscales" in .zattrs."""
    write_v2_array(path / "s0", LEVEL0, (4, 5))
    write_v2_array(path / "s1", LEVEL1, (4, 4))
    (path / ".zgroup").write_text(json.dumps({"zarr_format": 2}))
    (path / ".zattrs").write_text(json.dumps({"multiscales": [dict(multiscale(whole), version="0.4")]}))
    return path


def ome05(path: Path, whole: list | object | None = WHOLE) -> Path:
    """NGFF 0.5: a v3 group, "multiscales" under attributes.ome."""
    write_v3_array(path / "s0", LEVEL0, (4, 5))
    write_v3_array(path / "s1", LEVEL1, (4, 4))
    ome = {"version": "0.5", "multiscales": [multiscale(whole)]}
    (path / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {"ome": ome}}))
    return path


WRITERS = pytest.mark.parametrize("write", [ome04, ome05], ids=["ngff0.4-v2", "ngff0.5-v3"])


@WRITERS
def test_multiscale_transformations_apply_after_each_datasets(tmp_path, write) -> None:
    image = zarrdirect.open_multiscale(write(tmp_path / "img.zarr"))
    levels = image.levels
    # scale = s_ds * s_ms; translation = t_ds * s_ms + t_ms.
    assert levels[0]["scale"] == [1.0, 1.0] and levels[0]["translation"] == [10.0, 20.0]
    assert levels[1]["scale"] == [2.0, 2.0] and levels[1]["translation"] == [10.5, 20.5]


@WRITERS
def test_without_multiscale_transformations_levels_keep_their_own(tmp_path, write) -> None:
    image = zarrdirect.open_multiscale(write(tmp_path / "img.zarr", whole=None))
    assert image.levels[0]["scale"] == [0.5, 0.25] and image.levels[0]["translation"] is None
    assert image.levels[1]["scale"] == [1.0, 0.5] and image.levels[1]["translation"] == [0.25, 0.125]


@WRITERS
@pytest.mark.parametrize("whole, field, why", [
    ([{"type": "scale", "scale": [2, 4, 8]}], "multiscales[0].coordinateTransformations[0].scale",
     "has 3 values, the image has 2 axes"),
    ([{"type": "translation", "translation": [1]}], "multiscales[0].coordinateTransformations[0].translation",
     "has 1 values, the image has 2 axes"),
    ([{"type": "scale", "scale": [2, "4"]}], "multiscales[0].coordinateTransformations[0].scale",
     "must be a list of numbers"),
    ([{"type": "scale", "scale": "2"}], "multiscales[0].coordinateTransformations[0].scale",
     "must be a non-empty list of numbers"),
    ([{"type": "scale"}], "multiscales[0].coordinateTransformations[0].scale", "is missing"),
    ([["scale", [2, 4]]], "multiscales[0].coordinateTransformations[0]", "must be an object"),
    ({"type": "scale", "scale": [2, 4]}, "multiscales[0].coordinateTransformations", "must be a list"),
])
def test_bad_multiscale_transformations_are_refused_by_field(tmp_path, write, whole, field, why) -> None:
    path = write(tmp_path / "img.zarr", whole=whole)
    with pytest.raises(zarrdirect.InvalidMetadataError) as caught:
        zarrdirect.open_multiscale(path)
    message = str(caught.value)
    assert f'"{field}" {why}' in message
    assert (".zattrs" if write is ome04 else "zarr.json") in message


def test_bad_dataset_transformations_name_the_dataset(tmp_path) -> None:
    path = ome05(tmp_path / "img.zarr", whole=None)
    doc = json.loads((path / "zarr.json").read_text())
    doc["attributes"]["ome"]["multiscales"][0]["datasets"][1]["coordinateTransformations"][0]["scale"] = [1, None]
    (path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zarrdirect.InvalidMetadataError,
                       match=r'multiscales\[0\]\.datasets\[1\]\.coordinateTransformations\[0\]\.scale" must be'):
        zarrdirect.open_multiscale(path)


def test_unknown_transformation_types_are_unsupported(tmp_path) -> None:
    path = ome04(tmp_path / "img.zarr", whole=[{"type": "affine", "affine": [[1, 0, 0], [0, 1, 0]]}])
    with pytest.raises(zarrdirect.UnsupportedError, match='transformation "affine" is not supported'):
        zarrdirect.open_multiscale(path)


def test_zarr_python_written_0_4_image_with_multiscale_scale(tmp_path) -> None:
    zarr = pytest.importorskip("zarr")
    root = zarr.group(store=str(tmp_path / "img.zarr"))
    root.create_dataset("0", data=LEVEL0, chunks=(4, 4))
    root.create_dataset("1", data=LEVEL1, chunks=(4, 4))
    root.attrs["multiscales"] = [{
        "version": "0.4", "axes": AXES,
        "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]},
                     {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [2, 2]}]}],
        "coordinateTransformations": [{"type": "scale", "scale": [0.3, 0.2]}],
    }]
    image = zarrdirect.open_multiscale(tmp_path / "img.zarr")
    assert image.levels[0]["scale"] == pytest.approx([0.3, 0.2])
    assert image.levels[1]["scale"] == pytest.approx([0.6, 0.4])
    np.testing.assert_array_equal(image[1][:], LEVEL1)


@WRITERS
def test_levels_are_a_sequence(tmp_path, write) -> None:
    image = zarrdirect.open_multiscale(write(tmp_path / "img.zarr"))
    arrays = list(image)  # stops after the last level
    assert len(arrays) == len(image) == 2
    assert [array.shape for array in arrays] == [LEVEL0.shape, LEVEL1.shape]
    np.testing.assert_array_equal(arrays[1][:], LEVEL1)
    assert [array.shape for array in image] == [LEVEL0.shape, LEVEL1.shape]  # iterable again
    assert image[-1].shape == LEVEL1.shape and image[-2].shape == LEVEL0.shape
    assert image[-1].name == "/s1" and image[0].basename == "s0"
    for index in (2, -3):
        with pytest.raises(IndexError, match="the image has 2 levels"):
            image[index]
    with pytest.raises(zarrdirect.InvalidArgumentError):  # still the zarrdirect error it was
        image.level(2)
    with pytest.raises(zarrdirect.InvalidArgumentError, match="integer"):
        image["0"]
    first, *rest = image
    assert first.shape == LEVEL0.shape and len(rest) == 1


@WRITERS
def test_open_on_an_image_names_its_levels(tmp_path, write) -> None:
    path = write(tmp_path / "img.zarr")
    with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
        zarrdirect.open(path)
    message = str(caught.value)
    assert "is an OME-Zarr multiscale group with 2 levels; choose one with open_multiscale(path)[level]" in message
    assert "open_multiscale(path).read(level=N)" in message
    assert "0: 's0' (8, 12) uint16" in message and "1: 's1' (4, 6) uint16" in message
    assert "\n" not in message


def test_open_on_an_image_quotes_hostile_level_paths(tmp_path) -> None:
    path = ome05(tmp_path / "img.zarr", whole=None)
    doc = json.loads((path / "zarr.json").read_text())
    doc["attributes"]["ome"]["multiscales"][0]["datasets"][1]["path"] = "s1\n\x1b[31merror: forged" + "x" * 200
    (path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zarrdirect.InvalidArgumentError) as caught:
        zarrdirect.open(path)
    message = str(caught.value)
    assert "\n" not in message and "\x1b" not in message and "x" * 100 not in message
    assert "with 2 levels" in message
