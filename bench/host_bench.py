"""Host-memory benchmark: zarrdirect against zarr-python 2 (Debian's python3-zarr) on this machine.

Writes 1 GiB uint16 arrays with zarr-python itself (v2: uncompressed, zstd level 1, blosc-lz4 with
byte shuffle), then reads each whole into host memory, warm page cache, median of --repeat runs.

    /usr/bin/python3 bench/host_bench.py --zarrdirect build/zarrdirect --work /tmp/zd-host
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import zarr
from numcodecs import Blosc, Zstd

SHAPE = (512, 1024, 1024)  # uint16: 1 GiB
CHUNKS = (128, 128, 128)


def volume() -> np.ndarray:
    # The built-in sample's signal (src/cli/sample.cpp): about 150..1900 plus 5 bits of noise,
    # like a microscopy volume (zstd-1 1.3x, blosc-lz4-shuffle 1.7x).
    z = np.sin(np.arange(SHAPE[0]) * 0.02)[:, None, None] * 250 + 1000
    y = np.cos(np.arange(SHAPE[1]) * 0.03)[None, :, None]
    x = np.sin(np.arange(SHAPE[2]) * 0.05)[None, None, :] * 600
    noise = np.random.default_rng(0).integers(0, 32, size=SHAPE, dtype=np.uint16)
    return ((z + x * y).astype(np.uint16) + noise).astype(np.uint16)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zarrdirect", default="build/zarrdirect")
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-host"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    compressors = {"raw": None, "zstd-1": Zstd(level=1), "blosc-lz4-shuffle": Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)}
    data = None
    rows = []
    for name, compressor in compressors.items():
        path = args.work / name
        attrs = path / ".zattrs"
        if not attrs.exists() or json.loads(attrs.read_text()).get("sample") != 2:
            data = volume() if data is None else data
            z = zarr.open(str(path), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="<u2", compressor=compressor)
            z[:] = data
            z.attrs["sample"] = 2  # the generator version: older arrays at this path are rewritten
        disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        z = zarr.open(str(path), mode="r")
        z[:]  # warm the page cache
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = z[:]
            times.append(time.perf_counter() - start)
        zp = out.nbytes / statistics.median(times) / 1e9
        result = subprocess.run([args.zarrdirect, "bench", str(path), "--repeat", str(args.repeat), "--json",
                                 "--fresh-output"],  # like z[:], a new result per read
                                capture_output=True, text=True, check=True)
        zd = json.loads(result.stdout.strip().splitlines()[-1])
        rows.append((name, disk / 2**30, zp, zd["median_gbps"], zd["threads"]))
        print(json.dumps({"array": name, "zarr_python_gbps": zp, "zarrdirect_gbps": zd["median_gbps"]}), flush=True)
    print("\n| array (1 GiB uint16, 128^3 chunks, v2) | on disk GiB | zarr-python 2 GB/s | zarrdirect GB/s | speed-up |")
    print("|---|---|---|---|---|")
    for name, disk, zp, zd, threads in rows:
        print(f"| {name} | {disk:.2f} | {zp:.2f} | {zd:.2f} ({threads} threads) | {zd / zp:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
