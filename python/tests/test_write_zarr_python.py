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
