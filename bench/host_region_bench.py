"""Host-memory region rewrite benchmark: a 256^3 region rewritten in the middle of a 512^3 uint16
array (256 MiB) held in Zarr v3, as in the issue's GPU table, from NumPy memory:
  - uncompressed, 128^3 chunks (the region is 8 whole chunks: no merge)
  - zstd-1, 128^3 chunks (the same)
  - 256^3 shards of 64^3 zstd-1 inner chunks: the region is an eighth of each of the 8 shards,
    so every shard is updated in part (its 56 untouched inner chunks kept, 8 replaced).
The data is bench/host_write_bench.py's (a smooth signal plus 5 bits of noise). Each run writes
a different patch into the same region of the same array (untimed setup: the arrays are created
once), so a sharded update sees the shards that the runs before it left; times run from the call
to its return (files closed, in the page cache; no fsync). Prints the median, min and max of
--repeat runs per layout, and the array's size on disk before and after the rewrites (to show that
repeated updates do not grow the shards without bound).

    PYTHONPATH=build/python /usr/bin/python3 bench/host_region_bench.py --work /tmp/zd-region-bench
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import zarrdirect

SHAPE = (512, 512, 512)  # uint16: 256 MiB
REGION = (slice(128, 384),) * 3
LAYOUTS = [
    # name, chunks, shards, codec
    ("uncompressed 128^3", (128, 128, 128), None, "raw"),
    ("zstd-1 128^3", (128, 128, 128), None, "zstd:1"),
    ("shards 256^3 / 64^3 zstd-1", (64, 64, 64), (256, 256, 256), "zstd:1"),
]


def volume() -> np.ndarray:
    z = np.sin(np.arange(SHAPE[0]) * 0.02)[:, None, None] * 250 + 1000
    y = np.cos(np.arange(SHAPE[1]) * 0.03)[None, :, None]
    x = np.sin(np.arange(SHAPE[2]) * 0.05)[None, None, :] * 600
    noise = np.random.default_rng(0).integers(0, 32, size=SHAPE, dtype=np.uint16)
    return ((z + x * y).astype(np.uint16) + noise).astype(np.uint16)


def folder_bytes(path: Path) -> int:
    """Bytes the files below `path` take on disk (holes in sparse files take none)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-region-bench"))
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--threads", type=int, default=None, help="zarrdirect's threads (default: its own)")
    parser.add_argument("--only", default=None, help="run only the layouts whose name contains this")
    args = parser.parse_args()

    data = volume()
    base_patch = np.ascontiguousarray(data[REGION])
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"512^3 uint16, region {REGION}, median of {args.repeat} rewrites (min - max); "
          f"threads {args.threads or 'default'}")
    print()
    print("| layout | region ms (median) | min | max | MiB on disk before | after |")
    print("|---|---|---|---|---|---|")
    for name, chunks, shards, codec in LAYOUTS:
        if args.only and args.only not in name:
            continue
        path = args.work / name.split()[0]
        shutil.rmtree(path, ignore_errors=True)
        array = zarrdirect.create(path, shape=SHAPE, dtype="uint16", chunks=chunks, shards=shards, codec=codec)
        array.write(data, threads=args.threads)
        size_before = folder_bytes(path)
        times = []
        patch = base_patch
        for run in range(args.repeat):
            patch = (base_patch ^ np.uint16(run + 1)).astype(np.uint16)
            start = time.perf_counter()
            array.write(patch, REGION, threads=args.threads)
            times.append(time.perf_counter() - start)
        back = zarrdirect.open(path)[REGION]
        if not np.array_equal(back, patch):
            raise SystemExit(f"{name}: the region did not read back")
        outside = zarrdirect.open(path)[0:128, :, :]
        if not np.array_equal(outside, data[0:128]):
            raise SystemExit(f"{name}: data outside the region changed")
        ms = [t * 1e3 for t in times]
        print(f"| {name} | {statistics.median(ms):.1f} | {min(ms):.1f} | {max(ms):.1f} | "
              f"{size_before / 2**20:.0f} | {folder_bytes(path) / 2**20:.0f} |")
        shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
