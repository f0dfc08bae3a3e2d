"""Host-memory write benchmark: zarrdirect against zarr-python 2 (Debian's python3-zarr) on the
same data, on this machine.

A 128 MiB uint16 volume held in NumPy (the built-in sample's signal plus 5 bits of noise, like
bench/host_bench.py) is written into a new array in 64^3 chunks:
  - v2 uncompressed, zstd-1 and blosc-lz4 (clevel 5, byte shuffle): zarrdirect and zarr-python 2
  - v3 256^3 shards of 64^3 zstd-1 chunks: zarrdirect alone (zarr-python 2 has no sharding)
then a 128^3 region in the middle (across chunk and shard borders) is rewritten in each array.
Times run from the call to its return (files closed, in the page cache; no fsync), median of
--repeat runs, the output folder removed between runs (not timed). Prints a markdown table.

    PYTHONPATH=build/python /usr/bin/python3 bench/host_write_bench.py --work /tmp/zd-write-bench
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import zarr
from numcodecs import Blosc, Zstd

import zarrdirect

SHAPE = (512, 512, 256)  # uint16: 128 MiB
CHUNKS = (64, 64, 64)
SHARDS = (256, 256, 256)
REGION = (slice(192, 320), slice(192, 320), slice(64, 192))  # 128^3 across chunk and shard borders

# name, zarrdirect codec spec, zarr-python 2 compressor
V2_CODECS = [
    ("uncompressed", "raw", None),
    ("zstd-1", "zstd:1", Zstd(level=1)),
    ("blosc-lz4", "blosc:lz4:5:shuffle", Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)),
]


def volume() -> np.ndarray:
    z = np.sin(np.arange(SHAPE[0]) * 0.02)[:, None, None] * 250 + 1000
    y = np.cos(np.arange(SHAPE[1]) * 0.03)[None, :, None]
    x = np.sin(np.arange(SHAPE[2]) * 0.05)[None, None, :] * 600
    noise = np.random.default_rng(0).integers(0, 32, size=SHAPE, dtype=np.uint16)
    return ((z + x * y).astype(np.uint16) + noise).astype(np.uint16)


def median_time(repeat: int, prepare, action) -> float:
    """Median seconds of `action()` over `repeat` runs, `prepare()` (untimed) before each."""
    times = []
    for _ in range(repeat):
        prepare()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-write-bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="zarrdirect's threads (default: its own)")
    args = parser.parse_args()

    data = volume()
    patch = (data[REGION] ^ 0x5A5A).astype(np.uint16)
    mib = data.nbytes / (1 << 20)
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []

    def fresh(path: Path):
        return lambda: shutil.rmtree(path, ignore_errors=True)

    for name, spec, compressor in V2_CODECS:
        zd_path, zp_path = args.work / f"zd-{name}", args.work / f"zp-{name}"

        def zd_write(path=zd_path, spec=spec):
            arr = zarrdirect.create(path, shape=SHAPE, dtype="uint16", chunks=CHUNKS, codec=spec, zarr_format=2)
            arr.write(data, threads=args.threads)

        def zp_write(path=zp_path, compressor=compressor):
            arr = zarr.open(str(path), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="uint16", compressor=compressor)
            arr[...] = data

        zd = median_time(args.repeat, fresh(zd_path), zd_write)
        zp = median_time(args.repeat, fresh(zp_path), zp_write)
        zd_region_array = zarrdirect.open(zd_path, mode="r+")
        zp_region_array = zarr.open(str(zp_path), mode="r+")
        zd_region = median_time(args.repeat, lambda: None,
                                lambda: zd_region_array.write(patch, REGION, threads=args.threads))
        zp_region = median_time(args.repeat, lambda: None, lambda: zp_region_array.__setitem__(REGION, patch))
        if not np.array_equal(zarr.open(str(zd_path), mode="r")[REGION], patch):
            raise SystemExit(f"{name}: zarrdirect's array does not read back through zarr-python 2")
        rows.append((f"v2 {name}", mib / 1024 / zd, mib / 1024 / zp, zd_region * 1e3, zp_region * 1e3))

    sharded = args.work / "zd-sharded"

    def sharded_write():
        arr = zarrdirect.create(sharded, shape=SHAPE, dtype="uint16", chunks=CHUNKS, shards=SHARDS, codec="zstd:1")
        arr.write(data, threads=args.threads)

    zd = median_time(args.repeat, fresh(sharded), sharded_write)
    sharded_array = zarrdirect.open(sharded, mode="r+")
    zd_region = median_time(args.repeat, lambda: None, lambda: sharded_array.write(patch, REGION, threads=args.threads))
    if not np.array_equal(zarrdirect.open(sharded)[REGION], patch):
        raise SystemExit("sharded: the region did not read back")
    rows.append(("v3 shards 256^3 / 64^3 zstd-1", mib / 1024 / zd, None, zd_region * 1e3, None))

    print(f"128 MiB uint16 {SHAPE}, 64^3 chunks, median of {args.repeat}; region rewrite {REGION}")
    print()
    print("| layout | zarrdirect GB/s | zarr-python 2 GB/s | ratio | region zarrdirect ms | region zarr-python 2 ms |")
    print("|---|---|---|---|---|---|")
    for name, zd_rate, zp_rate, zd_ms, zp_ms in rows:
        gb = 1.073741824  # GiB -> GB
        zd_gbs = zd_rate * gb
        zp_gbs = f"{zp_rate * gb:.2f}" if zp_rate else "-"
        ratio = f"{zd_rate / zp_rate:.2f}x" if zp_rate else "-"
        zp_region_ms = f"{zp_ms:.1f}" if zp_ms else "-"
        print(f"| {name} | {zd_gbs:.2f} | {zp_gbs} | {ratio} | {zd_ms:.1f} | {zp_region_ms} |")
    shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
