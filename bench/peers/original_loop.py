"""A faithful port of the original module's read loop (the kvikio module zarrdirect started from), the peer zarrdirect
is measured against: one chunk at a time, each read into a chunk-shaped device scratch buffer and
copied into place with CuPy slicing.

The original reads through kvikio.CuFile. Where kvikio is not installed (the GPU machine has
none) this port does what kvikio does without nvidia-fs, its compatibility mode: pread into a
pinned bounce buffer, then copy host-to-device. Uncompressed arrays only, as the original.

    python3 original_loop.py ARRAY [--repeat N] [--cold]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from itertools import product
from pathlib import Path

import numpy as np


def load_spec(path: Path) -> dict:
    if (path / "zarr.json").exists():
        meta = json.loads((path / "zarr.json").read_text())
        names = [c.get("name") for c in meta.get("codecs", [])]
        if any(n != "bytes" for n in names):
            raise NotImplementedError(f"{path}: codecs {names}: the original loop reads raw bytes only")
        encoding = meta.get("chunk_key_encoding", {"name": "default"})
        sep = encoding.get("configuration", {}).get("separator", "/")
        return dict(shape=tuple(meta["shape"]), chunks=tuple(meta["chunk_grid"]["configuration"]["chunk_shape"]),
                    dtype=np.dtype(meta["data_type"]), fill=meta.get("fill_value", 0),
                    key=(lambda idx: "c" + sep + sep.join(map(str, idx))) if encoding["name"] == "default"
                    else (lambda idx: sep.join(map(str, idx))))
    meta = json.loads((path / ".zarray").read_text())
    if meta.get("compressor") is not None or meta.get("filters"):
        raise NotImplementedError(f"{path}: compressed; the original loop reads raw bytes only")
    sep = meta.get("dimension_separator", ".")
    return dict(shape=tuple(meta["shape"]), chunks=tuple(meta["chunks"]), dtype=np.dtype(meta["dtype"]),
                fill=meta.get("fill_value") or 0, key=lambda idx: sep.join(map(str, idx)))


def make_reader(cupy):
    """kvikio.CuFile.pread when kvikio exists, else its compatibility-mode equivalent."""
    try:
        import kvikio  # noqa: F401

        def read(path, scratch, nbytes):
            with kvikio.CuFile(str(path), "r") as f:
                f.pread(scratch, nbytes).get()
        return read, "kvikio"
    except ImportError:
        import cupyx
        bounce = {}

        def read(path, scratch, nbytes):
            host = bounce.get(nbytes)
            if host is None:
                host = bounce[nbytes] = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
            with open(path, "rb", buffering=0) as f:
                got = f.readinto(memoryview(host))
            scratch.view(np.uint8).reshape(-1)[:got].set(host[:got])
        return read, "posix bounce buffer (kvikio compatibility mode)"


def read_zarr_original(path: Path, cupy, read):
    spec = load_spec(path)
    out = cupy.full(spec["shape"], spec["fill"], dtype=spec["dtype"])
    scratch = cupy.empty(spec["chunks"], dtype=spec["dtype"])
    nbytes = int(np.prod(spec["chunks"])) * spec["dtype"].itemsize
    grid = [(s + c - 1) // c for s, c in zip(spec["shape"], spec["chunks"])]
    for idx in product(*[range(n) for n in grid]):
        chunk_path = path / spec["key"](idx)
        if not chunk_path.exists():
            continue
        slices, edge = [], []
        for k, c, s in zip(idx, spec["chunks"], spec["shape"]):
            start, stop = k * c, min(k * c + c, s)
            slices.append(slice(start, stop))
            edge.append(stop - start)
        read(chunk_path, scratch, nbytes)
        if tuple(edge) == spec["chunks"]:
            out[tuple(slices)] = scratch
        else:
            out[tuple(slices)] = scratch[tuple(slice(0, e) for e in edge)]
    cupy.cuda.runtime.deviceSynchronize()
    return out


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("array", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true")
    args = parser.parse_args()
    import cupy
    read, how = make_reader(cupy)
    for run in range(args.repeat):
        if args.cold:
            drop_caches()
        start = time.perf_counter()
        out = read_zarr_original(args.array, cupy, read)
        seconds = time.perf_counter() - start
        print(json.dumps({"tool": "original_loop", "how": how, "run": run + 1, "bytes": int(out.nbytes),
                          "seconds": seconds, "gbps": out.nbytes / seconds / 1e9}), flush=True)
        del out


if __name__ == "__main__":
    sys.exit(main())
