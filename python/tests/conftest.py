"""Shared fixtures: the conformance corpus, skip-on-unsupported, small array writers."""

from __future__ import annotations

import bz2
import json
import os
import zlib
from pathlib import Path

import numpy as np
import pytest

import zarrdirect

REPO = Path(__file__).resolve().parents[2]


def conformance_dir() -> Path:
    """ZARRDIRECT_CONFORMANCE_DIR, else the corpus the repository carries (tests/data/conformance)."""
    override = os.environ.get("ZARRDIRECT_CONFORMANCE_DIR")
    return Path(override) if override else REPO / "tests" / "data" / "conformance"


def conformance_cases() -> list[Path]:
    root = conformance_dir()
    if not root.is_dir():
        return []
    return sorted(case.parent for case in root.glob("*/*/case.json"))


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def skip_unsupported(call, *args, **kwargs):
    """Runs call(...); a feature zarrdirect lacks (UnsupportedError) skips the test with the reason,
    so the corpus shows what is missing instead of failing or hiding it."""
    try:
        return call(*args, **kwargs)
    except zarrdirect.UnsupportedError as error:
        pytest.skip(f"unsupported: {error}")


def assert_same(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal values (NaN equal to NaN) and the same dtype up to byte order."""
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype.newbyteorder("="), (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got, expected.astype(expected.dtype.newbyteorder("="), copy=False))


def write_v3_array(path: Path, data: np.ndarray, chunks: tuple[int, ...], fill_value=0,
                   attributes: dict | None = None) -> Path:
    """A Zarr v3 array with the plain "bytes" codec (little endian), written by hand: zarr-python 2
    only writes the pre-release v3 draft, so v3 inputs for groups are built here."""
    path.mkdir(parents=True, exist_ok=True)
    doc = {
        "zarr_format": 3, "node_type": "array", "shape": list(data.shape),
        "data_type": np.dtype(data.dtype).name if data.dtype != bool else "bool",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": attributes or {},
    }
    (path / "zarr.json").write_text(json.dumps(doc))
    grid = [-(-extent // chunk) for extent, chunk in zip(data.shape, chunks)]
    for coords in np.ndindex(*grid):
        block = np.full(chunks, fill_value, dtype=data.dtype)
        box = tuple(slice(c * n, min((c + 1) * n, extent)) for c, n, extent in zip(coords, chunks, data.shape))
        part = data[box]
        block[tuple(slice(0, s) for s in part.shape)] = part
        key = path / "c" / Path(*[str(c) for c in coords])
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(block.astype(block.dtype.newbyteorder("<"), copy=False).tobytes())
    return path


def write_v2_array(path: Path, data: np.ndarray, chunks: tuple[int, ...], compressor: str | None = None,
                   fill_value=0) -> Path:
    """A Zarr v2 array written with the standard library alone (no compressor, "zlib" or "bz2"),
    so tests that need an array but not zarr-python also run where it is not installed (the GPU
    machine). Every chunk is written; edge chunks are padded with the fill value as zarr does."""
    codecs = {None: (None, lambda b: b), "zlib": ({"id": "zlib", "level": 1}, lambda b: zlib.compress(b, 1)),
              "bz2": ({"id": "bz2", "level": 1}, lambda b: bz2.compress(b, 1))}
    config, encode = codecs[compressor]
    path.mkdir(parents=True, exist_ok=True)
    doc = {"zarr_format": 2, "shape": list(data.shape), "chunks": list(chunks), "dtype": data.dtype.str,
           "compressor": config, "fill_value": fill_value, "order": "C", "filters": None}
    (path / ".zarray").write_text(json.dumps(doc))
    grid = [-(-extent // chunk) for extent, chunk in zip(data.shape, chunks)]
    for coords in np.ndindex(*grid):
        block = np.full(chunks, fill_value, dtype=data.dtype)
        box = tuple(slice(c * n, min((c + 1) * n, extent)) for c, n, extent in zip(coords, chunks, data.shape))
        part = data[box]
        block[tuple(slice(0, s) for s in part.shape)] = part
        (path / (".".join(map(str, coords)) or "0")).write_bytes(encode(block.tobytes()))
    return path
