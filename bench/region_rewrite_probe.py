"""Where the time of a 256^3 region rewrite in a sharded array goes (issue 12), on the GPU machine.

The array of bench/gpu_write_bench.py (4 GiB uint16, 256^3 shards of 64^3 zstd-1 inner chunks) is
written once by zarrdirect and once by tensorstore; then the 256^3 region in the middle (8 shards,
8 of 64 inner chunks replaced in each) is rewritten from GPU memory, 5 times each:
  - right after the whole write (dirty pages of the 4 GiB still in the page cache), as the write
    benchmark does, and
  - after os.sync() before each rewrite (the writer alone, not the disk's backlog),
beside its parts measured alone:
  - copy_kept: copy_file_range of the 8 stored shard files into new files (the kept bytes a
    partial update must copy on a filesystem without reflinks), 8 threads;
  - encode_region: the same 256^3 region written into a new array of one 256^3 shard (gather,
    D2H, encode 64 inner chunks, write 1 file).

    python3 bench/region_rewrite_probe.py --work /tmp/zd-probe
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_write_bench import REGION, SHAPE, make_volume, tensorstore_spec  # noqa: E402

CHUNKS, SHARDS = (64, 64, 64), (256, 256, 256)


def median_ms(function, repeat=5, sync_first=False) -> float:
    times = []
    for _ in range(repeat):
        if sync_first:
            os.sync()
        times.append(function())
    return statistics.median(times) * 1e3


def touched_shards(path: Path) -> list[Path]:
    ranges = [range(s.start // n, (s.stop - 1) // n + 1) for s, n in zip(REGION, SHARDS)]
    return [path / "c" / str(z) / str(y) / str(x) for z in ranges[0] for y in ranges[1] for x in ranges[2]]


def copy_kept(path: Path) -> float:
    shards = touched_shards(path)

    def copy(source: Path) -> None:
        target = source.with_name(source.name + ".copy")
        with open(source, "rb") as src, open(target, "wb") as dst:
            left = os.fstat(src.fileno()).st_size
            while left:
                left -= os.copy_file_range(src.fileno(), dst.fileno(), left)
        target.unlink()

    start = time.perf_counter()
    with ThreadPoolExecutor(len(shards)) as pool:
        list(pool.map(copy, shards))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-probe"))
    args = parser.parse_args()
    import cupy
    import tensorstore as ts
    import zarrdirect

    args.work.mkdir(parents=True, exist_ok=True)
    info = {"filesystem": subprocess.run(["df", "-T", str(args.work)], capture_output=True, text=True).stdout.split("\n")[1],
            "dirty": {name: Path(f"/proc/sys/vm/{name}").read_text().strip()
                      for name in ("dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes")}}
    print(json.dumps(info), flush=True)
    volume = make_volume(cupy)
    patch = volume[REGION] + 1
    cupy.cuda.runtime.deviceSynchronize()
    zd_path, ts_path, one_path = args.work / "zd", args.work / "ts", args.work / "one"
    for path in (zd_path, ts_path, one_path):
        shutil.rmtree(path, ignore_errors=True)

    def zd_region() -> float:
        array = zarrdirect.open(zd_path, mode="r+")
        start = time.perf_counter()
        array[REGION] = patch
        return time.perf_counter() - start

    def ts_region() -> float:
        store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(ts_path)}}).result()
        start = time.perf_counter()
        store[REGION].write(cupy.asnumpy(patch)).result()
        return time.perf_counter() - start

    def encode_region() -> float:
        shutil.rmtree(one_path, ignore_errors=True)
        array = zarrdirect.create(one_path, shape=(256, 256, 256), dtype="uint16", chunks=CHUNKS, shards=SHARDS,
                                  codec="zstd:1")
        start = time.perf_counter()
        array[...] = patch
        return time.perf_counter() - start

    row = {}
    zarrdirect.create(zd_path, shape=SHAPE, dtype="uint16", chunks=CHUNKS, shards=SHARDS, codec="zstd:1")[...] = volume
    row["zarrdirect_region_after_write_ms"] = median_ms(zd_region)
    row["zarrdirect_region_synced_ms"] = median_ms(zd_region, sync_first=True)
    row["copy_kept_synced_ms"] = median_ms(lambda: copy_kept(zd_path), sync_first=True)
    row["encode_region_synced_ms"] = median_ms(encode_region, sync_first=True)
    row["shard_bytes"] = sum(p.stat().st_size for p in touched_shards(zd_path))
    shutil.rmtree(zd_path, ignore_errors=True)
    store = ts.open(tensorstore_spec(ts_path, CHUNKS, SHARDS, None), create=True, delete_existing=True).result()
    store.write(cupy.asnumpy(volume)).result()
    row["tensorstore_region_after_write_ms"] = median_ms(ts_region)
    row["tensorstore_region_synced_ms"] = median_ms(ts_region, sync_first=True)
    shutil.rmtree(ts_path, ignore_errors=True)
    shutil.rmtree(one_path, ignore_errors=True)
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
