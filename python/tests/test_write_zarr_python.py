"""zarrdirect's writes against zarr-python 2, both ways: what zarrdirect writes in v2 reads back
equal through zarr-python; arrays zarr-python wrote stay readable after zarrdirect rewrites them
in part."""

from __future__ import annotations

import numpy as np
import pytest

import zarrdirect
from test_write import CHUNKS, CODECS, SHAPE, sample

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("codec", [c for c in CODECS if "crc32c" not in c])
@pytest.mark.parametrize("dtype", ["|b1", "|i1", "<u2", "<i4", "<u8", "<f4", "<f8", "<c16"])
def test_zarr_python_reads_what_zarrdirect_writes(tmp_path, codec, dtype):
    data = sample(dtype)
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype=dtype, chunks=CHUNKS, codec=codec, zarr_format=2,
                            fill_value=0, attributes={"by": "zarrdirect"})
    arr[...] = data
    arr[0:7, 3:30] = data[0:7, 3:30][::-1]
    data[0:7, 3:30] = data[0:7, 3:30][::-1].copy()
    theirs = zarr.open_array(str(tmp_path / "a"), mode="r")
    np.testing.assert_array_equal(theirs[...], data)
    assert theirs.attrs["by"] == "zarrdirect"


def test_zarrdirect_rewrites_zarr_python_arrays_in_part(tmp_path):
    import numcodecs

    for name, kwargs in {
        "blosc": {"compressor": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)},
        "f_order_zlib": {"compressor": numcodecs.Zlib(level=3), "order": "F"},
        "big_endian_delta": {"compressor": None, "filters": [numcodecs.Delta(dtype=">i4")], "dtype": ">i4"},
        "slash": {"compressor": numcodecs.Zstd(level=1), "dimension_separator": "/"},
    }.items():
        dtype = kwargs.pop("dtype", "<i4")
        path = str(tmp_path / name)
        theirs = zarr.open_array(path, mode="w", shape=SHAPE, chunks=CHUNKS, dtype=dtype, fill_value=0, **kwargs)
        data = sample("<i4")
        theirs[...] = data
        ours = zarrdirect.open(path, mode="r+")
        patch = sample("<i4", (12, 9), seed=11)
        ours[10:22, 15:24] = patch
        data[10:22, 15:24] = patch
        np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data, err_msg=name)
        np.testing.assert_array_equal(ours[...], data, err_msg=name)


@pytest.mark.parametrize("order", ["C", "F"])
def test_order_and_filters_read_back_through_zarr_python(tmp_path, order):
    from numcodecs import Delta, FixedScaleOffset

    data = sample("<u2")
    arr = zarrdirect.create(tmp_path / "a", shape=SHAPE, dtype="<u2", chunks=CHUNKS, codec="zstd:1", zarr_format=2,
                            order=order, filters=[Delta(dtype="<u2"), {"id": "shuffle", "elementsize": 2}])
    arr[...] = data
    arr[3:20, 5:41] = data[3:20, 5:41][::-1]
    data[3:20, 5:41] = data[3:20, 5:41][::-1].copy()
    theirs = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert theirs.order == order
    assert [f.get_config()["id"] for f in theirs.filters] == ["delta", "shuffle"]
    np.testing.assert_array_equal(theirs[...], data)
    np.testing.assert_array_equal(zarrdirect.open(tmp_path / "a")[...], data)

    # zarr-python's own F-order, filtered array, rewritten in part by zarrdirect.
    floats = (sample("<f8") * 0.01).round(2)
    z = zarr.open_array(str(tmp_path / "z"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="<f8", order=order,
                        filters=[FixedScaleOffset(offset=0, scale=100, dtype="<f8", astype="<i4")])
    z[...] = floats
    mine = zarrdirect.open(tmp_path / "z", mode="r+")
    mine[10:30, 0:25] = floats[10:30, 0:25] + 1
    floats[10:30, 0:25] += 1
    np.testing.assert_allclose(zarr.open_array(str(tmp_path / "z"), mode="r")[...], floats)


def test_order_f_in_v3_is_a_transpose_codec(tmp_path):
    data = sample("<i4")
    for shards in (None, (32, 40)):
        path = tmp_path / f"s{shards is not None}"
        arr = zarrdirect.create(path, shape=SHAPE, dtype="<i4", chunks=CHUNKS, shards=shards, codec="raw", order="F")
        arr[...] = data
        np.testing.assert_array_equal(zarrdirect.open(path)[...], data)
        doc = (path / "zarr.json").read_text()
        assert '"transpose"' in doc
    with pytest.raises(zarrdirect.InvalidArgumentError, match="zarr_format 2"):
        zarrdirect.create(tmp_path / "x", shape=SHAPE, dtype="<u2", chunks=CHUNKS, filters=[{"id": "delta", "dtype": "<u2"}])
    with pytest.raises(zarrdirect.InvalidArgumentError, match="order"):
        zarrdirect.create(tmp_path / "y", shape=SHAPE, dtype="<u2", chunks=CHUNKS, order="K")
    with pytest.raises(zarrdirect.InvalidArgumentError, match="filter"):
        zarrdirect.create(tmp_path / "z", shape=SHAPE, dtype="<u2", chunks=CHUNKS, zarr_format=2, filters=[3])
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())


def test_zero_chunks_of_an_array_without_fill_value_are_stored(tmp_path):
    # fill_value null: zarr-python 2 leaves a missing chunk uninitialised, so a chunk of zeros that
    # zarrdirect erased read back there as the chunk's old values.
    theirs = zarr.open(str(tmp_path / "a"), mode="w", shape=(4, 4), chunks=(2, 2), dtype="f8", fill_value=None)
    theirs[...] = 5
    mine = zarrdirect.open(tmp_path / "a", mode="r+")
    mine[0:2, 0:2] = 0
    assert (tmp_path / "a" / "0.0").exists()
    np.testing.assert_array_equal(zarr.open(str(tmp_path / "a"), mode="r")[0:2, 0:2], np.zeros((2, 2)))
