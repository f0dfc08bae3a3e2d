"""Cross-check against zarr-python 2: arrays it writes, in many dtypes, compressors, orders and
filters, read back by zarrdirect exactly as zarr-python reads them."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

import zarrdirect

SHAPE = (23, 17)
CHUNKS = (5, 8)

DTYPES = ["|b1", "|u1", "|i1", "<i2", ">u2", "<u4", ">i4", "<i8", "<u8", "<f2", ">f4", "<f8", "<c8", ">c16"]

COMPRESSORS = {
    "none": None,
    "zlib": numcodecs.Zlib(level=3),
    "gzip": numcodecs.GZip(level=1),
    "bz2": numcodecs.BZ2(level=1),
    "lzma": numcodecs.LZMA(preset=1),
    "lzma_alone": numcodecs.LZMA(format=2, preset=0),
    "lz4": numcodecs.LZ4(),
    "zstd": numcodecs.Zstd(level=3),
    "blosc_lz4_shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "blosc_zstd_bitshuffle": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE),
    "blosc_zlib_noshuffle": numcodecs.Blosc(cname="zlib", clevel=1, shuffle=numcodecs.Blosc.NOSHUFFLE),
}


def sample(dtype: np.dtype, shape=SHAPE) -> np.ndarray:
    """Values that exercise every byte of the type: signs, large magnitudes, fractions."""
    rng = np.random.default_rng(1234)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype.newbyteorder("="), endpoint=True).astype(dtype)
    values = rng.standard_normal(size=shape) * 1000
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(size=shape)
    return values.astype(dtype)


def write(path, data: np.ndarray, *, partial: bool = True, **options) -> zarr.Array:
    """Writes `data` with zarr-python; with `partial`, the last rows' chunks are never written, so
    they must read as the fill value."""
    array = zarr.open(str(path), mode="w", shape=data.shape, dtype=data.dtype, chunks=options.pop("chunks", CHUNKS),
                      **options)
    if partial and data.ndim and data.shape[0] > CHUNKS[0]:
        array[: data.shape[0] - CHUNKS[0] - 3] = data[: data.shape[0] - CHUNKS[0] - 3]
    else:
        array[...] = data
    return array


def check(path, reference: zarr.Array) -> None:
    array = zarrdirect.open(path)
    expected = reference[...]
    got = array.read()
    assert got.dtype == expected.dtype.newbyteorder("=")
    np.testing.assert_array_equal(got, expected)
    box = tuple(slice(n // 3, n - n // 5) for n in expected.shape)
    np.testing.assert_array_equal(array[box], expected[box])
    np.testing.assert_array_equal(array.fill_value, np.array(reference.fill_value, dtype=expected.dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("compressor", COMPRESSORS, ids=str)
def test_dtypes_and_compressors(tmp_path, dtype: str, compressor: str) -> None:
    data = sample(np.dtype(dtype))
    fill = 0 if np.dtype(dtype).kind != "b" else False
    reference = write(tmp_path / "a.zarr", data, compressor=COMPRESSORS[compressor], fill_value=fill)
    check(tmp_path / "a.zarr", reference)


@pytest.mark.parametrize("dtype", ["<u2", ">i4", "<f8", "<c8"])
@pytest.mark.parametrize("compressor", ["none", "zstd", "blosc_lz4_shuffle"])
def test_fortran_order(tmp_path, dtype: str, compressor: str) -> None:
    reference = write(tmp_path / "f.zarr", sample(np.dtype(dtype)), order="F", compressor=COMPRESSORS[compressor])
    check(tmp_path / "f.zarr", reference)


@pytest.mark.parametrize(
    "name, dtype, filters",
    [
        ("delta_i4", "<i4", [numcodecs.Delta(dtype="<i4")]),
        ("delta_u2_astype", "<u2", [numcodecs.Delta(dtype="<u2", astype="<u2")]),
        ("delta_f8", "<f8", [numcodecs.Delta(dtype="<f8")]),
        ("fixedscaleoffset", "<f8", [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4")]),
        ("shuffle_delta", "<i8", [numcodecs.Shuffle(elementsize=8), numcodecs.Delta(dtype="<i8")]),
        ("delta_shuffle", "<i4", [numcodecs.Delta(dtype="<i4"), numcodecs.Shuffle(elementsize=4)]),
        # numcodecs shuffles the stored (big-endian) bytes: the byte swap must come after it.
        ("shuffle_big_endian", ">u2", [numcodecs.Shuffle(elementsize=2)]),
        ("delta_shuffle_big_endian", ">i4", [numcodecs.Delta(dtype=">i4"), numcodecs.Shuffle(elementsize=4)]),
        ("quantize", "<f4", [numcodecs.Quantize(digits=2, dtype="<f4")]),
        ("astype", "<f8", [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")]),
        # Checksums add 4 bytes to what they see: they run on the stored bytes, after the bytes codec.
        ("crc32", "<i4", [numcodecs.CRC32()]),
        ("adler32", "<u2", [numcodecs.Adler32()]),
        ("delta_crc32", "<i8", [numcodecs.Delta(dtype="<i8"), numcodecs.CRC32()]),
        ("shuffle_adler32_big_endian", ">f8", [numcodecs.Shuffle(elementsize=8), numcodecs.Adler32()]),
    ],
)
def test_filters(tmp_path, name: str, dtype: str, filters) -> None:
    data = sample(np.dtype(dtype))
    reference = write(tmp_path / f"{name}.zarr", data, filters=filters, compressor=numcodecs.Zlib(level=1))
    check(tmp_path / f"{name}.zarr", reference)


@pytest.mark.parametrize("filters", [[numcodecs.PackBits()], [numcodecs.PackBits(), numcodecs.CRC32()]],
                         ids=["packbits", "packbits_crc32"])
def test_packed_booleans(tmp_path, filters) -> None:
    # 5 x 7 chunks: 35 elements, not a multiple of 8, so the last byte of each is padded.
    data = sample(np.dtype(bool))
    reference = write(tmp_path / "a.zarr", data, filters=filters, compressor=numcodecs.Zlib(level=1), chunks=(5, 7))
    check(tmp_path / "a.zarr", reference)


@pytest.mark.parametrize("dtype", ["<i4", "<i8", "<f4", "<f8"])
@pytest.mark.parametrize("mode", ["accuracy", "rate", "precision"])
def test_zfp(tmp_path, dtype: str, mode: str) -> None:
    # zfp is lossy: what zarr-python decodes through numcodecs and libzfp is the reference, and
    # zarrdirect, through the same libzfp, must give the same bits.
    zfpy = pytest.importorskip("zfpy")
    settings = {"accuracy": dict(mode=zfpy.mode_fixed_accuracy, tolerance=0.05),
                "rate": dict(mode=zfpy.mode_fixed_rate, rate=12),
                "precision": dict(mode=zfpy.mode_fixed_precision, precision=20)}[mode]
    data = sample(np.dtype(dtype))
    reference = write(tmp_path / "a.zarr", data, compressor=numcodecs.ZFPY(**settings))
    check(tmp_path / "a.zarr", reference)


def test_a_damaged_checksum_names_the_chunk(tmp_path) -> None:
    data = sample(np.dtype("<i4"))
    write(tmp_path / "a.zarr", data, filters=[numcodecs.CRC32()], compressor=None)
    chunk = tmp_path / "a.zarr" / "0.0"
    stored = bytearray(chunk.read_bytes())
    stored[10] ^= 0x40
    chunk.write_bytes(bytes(stored))
    with pytest.raises(zarrdirect.CorruptDataError, match=r"0\.0.*numcodecs\.crc32.*checksum mismatch"):
        zarrdirect.open(tmp_path / "a.zarr").read()


def test_a_checksum_before_an_arithmetic_filter_is_refused_by_name(tmp_path) -> None:
    data = sample(np.dtype("<i4"))
    write(tmp_path / "a.zarr", data, filters=[numcodecs.CRC32(), numcodecs.Delta(dtype="<i4")])
    with pytest.raises(zarrdirect.UnsupportedError, match=r"\.zarray.*\"crc32\" is followed by an arithmetic filter"):
        zarrdirect.open(tmp_path / "a.zarr")


def test_nan_fill_and_missing_chunks(tmp_path) -> None:
    reference = write(tmp_path / "n.zarr", sample(np.dtype("<f4")), fill_value=np.nan)
    check(tmp_path / "n.zarr", reference)
    assert np.isnan(zarrdirect.open(tmp_path / "n.zarr").fill_value)
    assert np.isnan(zarrdirect.open(tmp_path / "n.zarr")[-1]).all()


def test_nonzero_fill_and_nested_keys(tmp_path) -> None:
    reference = write(tmp_path / "k.zarr", sample(np.dtype("<i2")), fill_value=-7, dimension_separator="/",
                      compressor=numcodecs.Blosc())
    check(tmp_path / "k.zarr", reference)
    assert (zarrdirect.open(tmp_path / "k.zarr")[-1] == -7).all()


@pytest.mark.parametrize("shape, chunks", [((), ()), ((0, 5), (2, 2)), ((1000,), (64,)), ((3, 4, 5, 6), (2, 3, 2, 4))])
def test_shapes(tmp_path, shape, chunks) -> None:
    data = np.arange(int(np.prod(shape)), dtype="<u4").reshape(shape)
    array = zarr.open(str(tmp_path / "s.zarr"), mode="w", shape=shape, chunks=chunks, dtype=data.dtype)
    array[...] = data
    check(tmp_path / "s.zarr", array)


def test_attributes(tmp_path) -> None:
    reference = write(tmp_path / "attrs.zarr", sample(np.dtype("<u1")))
    reference.attrs.update({"units": "nm", "nested": {"list": [1, 2.5, None]}})
    array = zarrdirect.open(tmp_path / "attrs.zarr")
    assert array.attrs == {"units": "nm", "nested": {"list": [1, 2.5, None]}}
    with pytest.raises(zarrdirect.InvalidArgumentError, match="read-only"):
        array.attrs["units"] = "changed"  # opened for reading: attributes are not changed
    assert array.attrs["units"] == "nm"


def test_consolidated_group(tmp_path) -> None:
    root = zarr.group(store=str(tmp_path / "g.zarr"))
    root.attrs["title"] = "experiment"
    images = root.create_group("images")
    first = images.create_dataset("first", data=sample(np.dtype("<u2")), chunks=CHUNKS)
    root.create_dataset("table", data=np.arange(10.0), chunks=(4,))
    zarr.consolidate_metadata(str(tmp_path / "g.zarr"))

    group = zarrdirect.open_group(tmp_path / "g.zarr")
    assert group.consolidated and group.zarr_format == 2
    assert group.attrs == {"title": "experiment"}
    assert group.members() == ["images", "table"]
    assert list(group.array_keys()) == ["table"] and list(group.group_keys()) == ["images"]
    assert isinstance(group["images"], zarrdirect.Group) and group["images"].consolidated
    np.testing.assert_array_equal(group["images"]["first"][...], first[...])
    np.testing.assert_array_equal(group["images/first"][2:4], first[2:4])
    np.testing.assert_array_equal(group["table"].read(), np.arange(10.0))
    assert "images/first" in group and "missing" not in group
    with pytest.raises(KeyError):
        group["missing"]
    with pytest.raises(zarrdirect.InvalidArgumentError):
        group["../g.zarr"]
