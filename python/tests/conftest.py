"""Shared fixtures: the conformance corpus with its expected refusals, small array writers."""

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
    """Every case of the corpus; a missing or empty corpus is an error, never an empty list (a
    test that cannot find its data must fail, not pass by running nothing)."""
    root = conformance_dir()
    cases = sorted(case.parent for case in root.glob("*/*/case.json"))
    if not cases:
        raise RuntimeError(f"no conformance cases under {root}")
    return cases


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def expected_refusals() -> dict[str, str]:
    """expected_refusals.json beside the corpus: case ("writer/name") -> why zarrdirect refuses it."""
    doc = json.loads((conformance_dir() / "expected_refusals.json").read_text())
    return {entry["case"]: entry["reason"] for entry in doc["refusals"]}


def read_case(case: Path, call, *args, **kwargs):
    """Runs call(...) for conformance case `case`. An UnsupportedError fails the test unless the
    case is an expected refusal (then the test is marked xfail with the listed reason); a listed
    case that reads fails too, so the list never hides a case that works."""
    reason = expected_refusals().get(case_id(case))
    try:
        result = call(*args, **kwargs)
    except zarrdirect.UnsupportedError as error:
        if reason is None:
            pytest.fail(f"{case_id(case)} refused as unsupported and not an expected refusal: {error}")
        pytest.xfail(f"expected refusal: {reason}")
    if reason is not None:
        pytest.fail(f"{case_id(case)} is listed in expected_refusals.json ({reason}) but reads: take it off")
    return result


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
