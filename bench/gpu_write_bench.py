"""The GPU write benchmark: zarrdirect writing a volume held in GPU memory, against tensorstore and
the hardware bound, in one run on one machine.

A 4 GiB uint16 volume (smooth signal plus noise, like the read benchmark's sample) is made on the
GPU, then written into a new Zarr v3 array by
  - bare_loop    the bound: one device-to-host copy into pinned memory, then 16 threads pwrite
                 4 MiB files (as many files as the array has 128^3 chunks); with --durable each
                 file is fsynced, as a final sync would
  - zarrdirect   zarrdirect.create(...) then arr[...] = volume (CuPy, no host round trip in Python)
  - tensorstore  copy to host (cupy.asnumpy), then ts.open(create) and write().result()
for uncompressed 128^3 chunks, zstd-1 128^3 chunks and 256^3 shards of 64^3 zstd-1 chunks, timed
from the call to the last file closed, best (median) of --repeat runs; then a 256^3 region is
rewritten in the middle of each array (milliseconds, median of 5).

    python3 bench/gpu_write_bench.py --work /tmp/zd-write --out write-results.md
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

SHAPE = (1024, 1024, 2048)  # uint16: 4 GiB
REGION = (slice(384, 640), slice(384, 640), slice(896, 1152))  # 256^3 from the middle
LAYOUTS = [
    # name, chunks, shards, zarrdirect codec spec, tensorstore codecs
    ("raw-128", (128, 128, 128), None, "raw", [{"name": "bytes", "configuration": {"endian": "little"}}]),
    ("zstd1-128", (128, 128, 128), None, "zstd:1",
     [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]),
    ("sharded-256-zstd1-64", (64, 64, 64), (256, 256, 256), "zstd:1", None),
]


def make_volume(cupy):
    """A smooth 3-d signal plus a few bits of noise, made on the device."""
    z, y, x = (cupy.arange(n, dtype=cupy.float32) for n in SHAPE)
    signal = (cupy.sin(z[:, None, None] / 37.0) + cupy.cos(y[None, :, None] / 23.0) + cupy.sin(x[None, None, :] / 51.0))
    volume = (1000 + 280 * signal).astype(cupy.uint16)
    volume += cupy.random.randint(0, 32, size=SHAPE, dtype=cupy.uint16)
    cupy.cuda.runtime.deviceSynchronize()
    return volume


def bare_loop(cupy, volume, path: Path, durable: bool, threads: int = 16, file_bytes: int = 4 << 20) -> float:
    """D2H into pinned memory, then `threads` threads pwrite `file_bytes` files."""
    nbytes = volume.nbytes
    pinned = cupy.cuda.alloc_pinned_memory(nbytes)
    import numpy
    host = numpy.frombuffer(pinned, dtype=numpy.uint8, count=nbytes)
    path.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    cupy.cuda.runtime.memcpy(host.ctypes.data, volume.data.ptr, nbytes, cupy.cuda.runtime.memcpyDeviceToHost)
    count = nbytes // file_bytes
    next_index = [0]
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                index = next_index[0]
                next_index[0] += 1
            if index >= count:
                return
            fd = os.open(path / str(index), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            view = memoryview(host[index * file_bytes:(index + 1) * file_bytes])
            written = 0
            while written < file_bytes:
                written += os.pwrite(fd, view[written:], written)
            if durable:
                os.fsync(fd)
            os.close(fd)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if durable:
        dir_fd = os.open(path, os.O_RDONLY)
        os.fsync(dir_fd)
        os.close(dir_fd)
    return time.perf_counter() - start


def zarrdirect_write(zarrdirect, volume, path: Path, chunks, shards, codec: str, durable: bool) -> float:
    start = time.perf_counter()
    array = zarrdirect.create(path, shape=volume.shape, dtype=volume.dtype, chunks=chunks, shards=shards, codec=codec,
                              overwrite=True)
    array.write(volume, durable=durable)
    return time.perf_counter() - start


def zarrdirect_region(zarrdirect, cupy, volume, path: Path) -> float:
    array = zarrdirect.open(path, mode="r+")
    patch = volume[REGION] + 1
    cupy.cuda.runtime.deviceSynchronize()
    start = time.perf_counter()
    array[REGION] = patch
    return time.perf_counter() - start


def tensorstore_spec(path: Path, chunks, shards, codecs):
    if shards is None:
        grid, codec_list = chunks, codecs
    else:
        grid = shards
        codec_list = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunks),
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
            "metadata": {"shape": list(SHAPE), "data_type": "uint16",
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
                         "codecs": codec_list}}


def tensorstore_write(ts, cupy, volume, path: Path, chunks, shards, codecs, durable: bool) -> float:
    start = time.perf_counter()
    host = cupy.asnumpy(volume)
    store = ts.open(tensorstore_spec(path, chunks, shards, codecs), create=True, delete_existing=True).result()
    store.write(host).result()
    if durable:
        os.sync()
    return time.perf_counter() - start


def tensorstore_region(ts, cupy, volume, path: Path) -> float:
    store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()
    patch = volume[REGION] + 1
    cupy.cuda.runtime.deviceSynchronize()
    start = time.perf_counter()
    store[REGION].write(cupy.asnumpy(patch)).result()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-write"))
    parser.add_argument("--out", type=Path, default=Path("write-results.md"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layouts", default=",".join(layout[0] for layout in LAYOUTS))
    parser.add_argument("--skip-durable", action="store_true")
    parser.add_argument("--skip-check", action="store_true", help="skip reading zarrdirect's arrays back with tensorstore")
    args = parser.parse_args()
    import cupy
    import numpy
    import tensorstore as ts
    import zarrdirect

    volume = make_volume(cupy)
    nbytes = volume.nbytes
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []

    def rate(seconds):
        return nbytes / seconds / 1e9

    def timed(function, target: Path, repeat: int):
        times = []
        for _ in range(repeat):
            shutil.rmtree(target, ignore_errors=True)
            times.append(function())
        return statistics.median(times)

    bound = {"page_cache": rate(timed(lambda: bare_loop(cupy, volume, args.work / "bare", False), args.work / "bare", args.repeat))}
    if not args.skip_durable:
        bound["durable"] = rate(timed(lambda: bare_loop(cupy, volume, args.work / "bare", True), args.work / "bare", 1))
    shutil.rmtree(args.work / "bare", ignore_errors=True)
    print(json.dumps({"bare_loop": bound}), flush=True)

    wanted = set(args.layouts.split(","))
    for name, chunks, shards, spec, ts_codecs in LAYOUTS:
        if name not in wanted:
            continue
        zd_path, ts_path = args.work / f"zd-{name}", args.work / f"ts-{name}"
        row = {"layout": name, "bound": bound["page_cache"]}
        row["zarrdirect"] = rate(timed(lambda: zarrdirect_write(zarrdirect, volume, zd_path, chunks, shards, spec, False),
                                       zd_path, args.repeat))
        row["tensorstore"] = rate(timed(lambda: tensorstore_write(ts, cupy, volume, ts_path, chunks, shards, ts_codecs, False),
                                        ts_path, args.repeat))
        if not args.skip_durable and name == "raw-128":
            row["bound_durable"] = bound.get("durable")
            row["zarrdirect_durable"] = rate(timed(
                lambda: zarrdirect_write(zarrdirect, volume, zd_path, chunks, shards, spec, True), zd_path, 1))
            row["tensorstore_durable"] = rate(timed(
                lambda: tensorstore_write(ts, cupy, volume, ts_path, chunks, shards, ts_codecs, True), ts_path, 1))
        # Interoperability: tensorstore reads back what zarrdirect wrote, equal to the volume.
        zarrdirect_write(zarrdirect, volume, zd_path, chunks, shards, spec, False)
        if not args.skip_check:
            back = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(zd_path)}}).result().read().result()
            row["tensorstore_reads_zarrdirect_equal"] = bool(numpy.array_equal(back, cupy.asnumpy(volume)))
        row["zarrdirect_region_ms"] = statistics.median(
            zarrdirect_region(zarrdirect, cupy, volume, zd_path) for _ in range(5)) * 1e3
        if not args.skip_check:
            back = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(zd_path)}}).result()[REGION].read().result()
            row["region_equal_through_tensorstore"] = bool(numpy.array_equal(back, cupy.asnumpy(volume[REGION] + 1)))
        tensorstore_write(ts, cupy, volume, ts_path, chunks, shards, ts_codecs, False)
        row["tensorstore_region_ms"] = statistics.median(tensorstore_region(ts, cupy, volume, ts_path) for _ in range(5)) * 1e3
        shutil.rmtree(zd_path, ignore_errors=True)
        shutil.rmtree(ts_path, ignore_errors=True)
        rows.append(row)
        print(json.dumps(row), flush=True)
        write_table(rows, bound, args.out)
    return 0


def write_table(rows: list[dict], bound: dict, out: Path) -> None:
    def fmt(value, digits=2):
        return "-" if value is None else f"{value:.{digits}f}"

    lines = ["| layout | bare loop (bound) GB/s | zarrdirect GB/s | % of bound | tensorstore GB/s | zarrdirect / tensorstore | "
             "256^3 region: zarrdirect ms | tensorstore ms | speed-up | tensorstore reads it back equal |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        zd, tsr, b = row.get("zarrdirect"), row.get("tensorstore"), row.get("bound")
        zms, tms = row.get("zarrdirect_region_ms"), row.get("tensorstore_region_ms")
        lines.append(f"| {row['layout']} | {fmt(b)} | {fmt(zd)} | {100 * zd / b:.0f}% | {fmt(tsr)} | {fmt(zd / tsr, 1)}x | "
                     f"{fmt(zms, 1)} | {fmt(tms, 1)} | {fmt(tms / zms, 1)}x | "
                     f"{row.get('tensorstore_reads_zarrdirect_equal')} / {row.get('region_equal_through_tensorstore')} |")
        if "zarrdirect_durable" in row:
            zd_d, b_d = row["zarrdirect_durable"], row.get("bound_durable")
            lines.append(f"| {row['layout']}, durable | {fmt(b_d)} | {fmt(zd_d)} | "
                         f"{100 * zd_d / b_d if b_d else 0:.0f}% | {fmt(row.get('tensorstore_durable'))} | "
                         f"{fmt(zd_d / row['tensorstore_durable'] if row.get('tensorstore_durable') else None, 1)}x | | | | |")
    text = "\n".join(lines) + "\n\nGB/s: 10^9 bytes of the array per second, from the call to the last file closed.\n"
    print(text, flush=True)
    out.write_text(text + "\n```\n" + json.dumps(bound) + "\n" + "\n".join(json.dumps(r) for r in rows) + "\n```\n")


if __name__ == "__main__":
    sys.exit(main())
