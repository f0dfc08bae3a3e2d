"""Random patches for training loops: zarrdirect's batched reads against tensorstore (issue 16).

Writes the test volumes with `zarrdirect sample` (uint16, a smooth signal plus noise; zstd level
1, and uncompressed), then reads random `--patch`^3 patches into GPU memory (host memory with
--device cpu), warm page cache, and prints patches per second for:

  zd_one_by_one        arr.cuda[...] one after another
  zd_threads16         16 Python threads each calling arr.cuda[...]
  zd_read_many         arr.read_many(all patches, device, stack=True), no cache: on the GPU each
                       chunk's needed part is staged once and placed into every patch by the batch
                       kernel (upload once)
  zd_read_many_gather  the same with ZARRDIRECT_DEVICE_BATCH=0: each patch gathered in pinned host
                       memory and copied up (the path before upload-once placement), for comparison
  zd_read_many_cache   the same with the handle's host cache warm (--cache-gib, filled by one whole read)
  zd_read_many_devcache  the same with the handle's device cache warm (--device-cache-gib, GPU
                       memory, filled by reading every chunk once into the GPU): a device-to-device
                       gather, no host round trip (cuda only)
  zd_dataset           zarrdirect.torch.PatchDataset batches (--batch) with a dummy model step,
                       and zd_dataset_vs_read_many (its rate over read_many's of the same batch size),
                       zd_dataset_vs_bound (its rate over the batch / max(read, model step) bound);
                       with several --model-matmuls, one set of columns each, suffixed _m<N>
  ts_sequential        tensorstore, one read after another (then to the device)
  ts_futures           tensorstore, every read issued at once as futures
  ts_futures_cache     the same with a --cache-gib cache pool, warm (filled by one whole read)

With --quick: zd_read_many_<side> for ZARRDIRECT_DECODE=auto, gpu, share and cpu (compressed chunks
decoded on the GPU, shared with the CPU, or on the CPU), and ts_futures; nothing else.

Each zarrdirect rate has a `..._vs_ts_futures` column beside it: its rate over tensorstore's
futures (the cache columns over ts_futures_cache).

    python3 bench/patch_bench.py --build build --work /tmp/zd-patches --out patches.md
    python3 bench/patch_bench.py --device cpu --shape 256,256,256 --patches 100 --patch 32   # small, host

Run it with the build's Python module on PYTHONPATH (PYTHONPATH=build/python). Tools that are not
installed (tensorstore, torch, cupy) are reported as skipped.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ARRAYS = [("zstd-128", "128,128,128", "zstd"), ("raw-128", "128,128,128", "none")]


def patch_regions(shape, patch, count, seed):
    rng = np.random.default_rng(seed)
    corners = rng.integers(0, np.asarray(shape) - patch + 1, size=(count, len(shape)))
    return [tuple(slice(int(c), int(c) + patch) for c in corner) for corner in corners]


def rate(count, seconds):
    return round(count / seconds, 1) if seconds > 0 else None


def timed(function, repeat):
    """Median seconds of `repeat` calls (the first call is a warm-up and not counted)."""
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Sync:
    """Waits for the device (no-op on the host)."""

    def __init__(self, device):
        self.cupy = None
        self.torch = None
        if device != "cuda":
            return
        try:
            import cupy

            self.cupy = cupy
        except ImportError:
            try:
                import torch

                self.torch = torch
            except ImportError:
                pass

    def to_device(self, host):
        if self.cupy is not None:
            return self.cupy.asarray(host)
        if self.torch is not None:
            return self.torch.from_numpy(host).cuda()
        return host

    def __call__(self):
        if self.cupy is not None:
            self.cupy.cuda.runtime.deviceSynchronize()
        elif self.torch is not None:
            self.torch.cuda.synchronize()


def bench_zarrdirect(path, regions, args, row):
    import zarrdirect

    device = args.device
    read_one = (lambda a, r: a.cuda[r]) if device == "cuda" else (lambda a, r: a[r])
    arr = zarrdirect.open(path)
    n = len(regions)
    if args.quick:
        # read_many alone, with each decode side (ZARRDIRECT_DECODE, read per call) and the default.
        for side in ("auto", "gpu", "share", "cpu"):
            os.environ["ZARRDIRECT_DECODE"] = side
            try:
                row[f"zd_read_many_{side}"] = rate(n, timed(lambda: arr.read_many(regions, device=device, stack=True),
                                                            args.repeat))
            finally:
                del os.environ["ZARRDIRECT_DECODE"]
        return
    row["zd_one_by_one"] = rate(n, timed(lambda: [read_one(arr, r) for r in regions], args.repeat))
    with ThreadPoolExecutor(16) as pool:
        row["zd_threads16"] = rate(n, timed(lambda: list(pool.map(lambda r: read_one(arr, r), regions)), args.repeat))
    row["zd_read_many"] = rate(n, timed(lambda: arr.read_many(regions, device=device, stack=True), args.repeat))
    if device == "cuda":
        os.environ["ZARRDIRECT_DEVICE_BATCH"] = "0"  # read per call: the host-gather path
        try:
            row["zd_read_many_gather"] = rate(n, timed(lambda: arr.read_many(regions, device=device, stack=True),
                                                       args.repeat))
        finally:
            del os.environ["ZARRDIRECT_DEVICE_BATCH"]
    cached = zarrdirect.open(path, cache_bytes=int(args.cache_gib * 2**30))
    cached.read()  # fills the cache (the whole array fits in it at the default sizes)
    fresh = patch_regions(arr.shape, args.patch, n, args.seed + 1)
    row["zd_read_many_cache"] = rate(n, timed(lambda: cached.read_many(fresh, device=device, stack=True), args.repeat))
    row["zd_cache_entries"] = cached.cache_stats()["entries"]
    del cached
    if device == "cuda":
        bench_device_cache(path, n, args, row)
    bench_dataset(path, args, row)


def bench_device_cache(path, n, args, row):
    """read_many with the device cache warm: every chunk read once into the GPU first."""
    import zarrdirect

    arr = zarrdirect.open(path, device_cache_bytes=int(args.device_cache_gib * 2**30))
    shape = arr.shape
    chunks = arr.chunks
    # One patch per chunk: fills the device cache with every chunk (when it fits).
    corners = np.stack(np.meshgrid(*[np.arange(0, e, c) for e, c in zip(shape, chunks)], indexing="ij"), -1)
    whole = [tuple(slice(int(o), min(int(o) + c, e)) for o, c, e in zip(corner, chunks, shape))
             for corner in corners.reshape(-1, len(shape))]
    for start in range(0, len(whole), 64):
        arr.read_many(whole[start:start + 64], device="cuda")
    fresh = patch_regions(shape, args.patch, n, args.seed + 1)
    row["zd_read_many_devcache"] = rate(n, timed(lambda: arr.read_many(fresh, device="cuda", stack=True), args.repeat))
    stats = arr.device_cache_stats()
    row["zd_devcache_entries"] = stats["entries"]
    row["zd_devcache_gib"] = round(stats["bytes"] / 2**30, 2)
    arr.device_cache_bytes = 0  # frees the GPU memory before the next runs


def bench_dataset(path, args, row):
    try:
        import torch
    except ImportError:
        row["zd_dataset"] = "skipped (no torch)"
        return
    # One run per model size: a step longer than a batch's read measures how well the reads hide
    # behind it (the bound is then the step), a shorter one whether the GPU is fed at read_many's
    # rate while the model runs (the bound is then the read).
    for matmuls in args.model_matmuls:
        suffix = "" if len(args.model_matmuls) == 1 else f"_m{matmuls}"
        bench_dataset_with(path, args, row, torch, matmuls, suffix)


def bench_dataset_with(path, args, row, torch, matmuls, suffix):
    import zarrdirect
    from zarrdirect.torch import PatchDataset

    device = torch.device("cuda" if args.device == "cuda" else "cpu")
    weight = torch.randn(args.patch * args.patch, args.patch * args.patch, device=device)

    def model_step(batch):
        x = batch.to(device).float().reshape(-1, args.patch * args.patch)
        for _ in range(matmuls):
            x = torch.tanh(x @ weight)
        loss = x.mean()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return loss

    batches = max(args.patches // args.batch, 2)
    data = PatchDataset(path, (args.patch,) * 3, args.batch, num_batches=batches, seed=args.seed, device=args.device,
                        prefetch=args.prefetch)
    for batch in data:  # warm-up epoch
        model_step(batch)
    start = time.perf_counter()
    for batch in data:
        model_step(batch)
    seconds = time.perf_counter() - start
    rate_now = rate(batches * args.batch, seconds)
    row[f"zd_dataset{suffix}"] = rate_now
    # The model step alone, and read_many of the same batch size alone, for the ratio.
    dummy = torch.zeros((args.batch,) + (args.patch,) * 3, dtype=torch.int32, device=device)
    step_seconds = timed(lambda: model_step(dummy), 3)
    arr = zarrdirect.open(path)
    regions = patch_regions(arr.shape, args.patch, args.batch, args.seed + 2)
    read_seconds = timed(lambda: arr.read_many(regions, device=args.device, stack=True), args.repeat)
    row[f"model_step_ms{suffix}"] = round(step_seconds * 1e3, 2)
    row[f"zd_read_many_batch{suffix}"] = rate(args.batch, read_seconds)
    row[f"zd_dataset_vs_read_many{suffix}"] = round(rate_now / row[f"zd_read_many_batch{suffix}"], 3)
    # A loader that hides its reads entirely behind the model runs at the slower of the two: one
    # batch per max(read, step). Its rate over that is how well the prefetching overlaps.
    bound = args.batch / max(read_seconds, step_seconds)
    row[f"zd_dataset_bound{suffix}"] = rate(args.batch, max(read_seconds, step_seconds))
    row[f"zd_dataset_vs_bound{suffix}"] = round(rate_now / bound, 3)


def bench_tensorstore(path, regions, args, row):
    try:
        import tensorstore as ts
    except ImportError:
        row["tensorstore"] = "skipped (not installed)"
        return
    sync = Sync(args.device)
    driver = "zarr3" if (path / "zarr.json").exists() else "zarr"
    spec = {"driver": driver, "kvstore": {"driver": "file", "path": str(path)}}
    store = ts.open(spec, context=ts.Context()).result()
    n = len(regions)

    def sequential():
        for r in regions:
            sync.to_device(store[r].read().result())
        sync()

    def futures(s):
        pending = [s[r].read() for r in regions]
        for f in pending:
            sync.to_device(f.result())
        sync()

    row["ts_futures"] = rate(n, timed(lambda: futures(store), args.repeat))
    if args.quick:
        return
    row["ts_sequential"] = rate(n, timed(sequential, args.repeat))
    context = ts.Context({"cache_pool": {"total_bytes_limit": int(args.cache_gib * 2**30)}})
    cached = ts.open(spec, context=context).result()
    cached.read().result()  # fills the cache
    fresh = patch_regions(store.shape, args.patch, n, args.seed + 1)
    regions_backup = list(regions)
    regions[:] = fresh
    row["ts_futures_cache"] = rate(n, timed(lambda: futures(cached), args.repeat))
    regions[:] = regions_backup


def compare(row):
    """zarrdirect's rates over tensorstore's futures (cached over cached)."""
    peers = {"zd_read_many": "ts_futures", "zd_read_many_auto": "ts_futures", "zd_read_many_gpu": "ts_futures",
             "zd_read_many_share": "ts_futures", "zd_read_many_cpu": "ts_futures", "zd_read_many_gather": "ts_futures", "zd_dataset": "ts_futures",
             "zd_read_many_cache": "ts_futures_cache", "zd_read_many_devcache": "ts_futures_cache"}
    for ours, theirs in peers.items():
        if isinstance(row.get(ours), (int, float)) and isinstance(row.get(theirs), (int, float)) and row[theirs]:
            row[f"{ours}_vs_{theirs}"] = round(row[ours] / row[theirs], 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-patches"))
    parser.add_argument("--out", type=Path, default=Path("patch-bench.md"))
    parser.add_argument("--shape", default="1024,1024,2048")  # uint16: 4 GiB
    parser.add_argument("--arrays", default=",".join(a[0] for a in ARRAYS))
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--patch", type=int, default=64)
    parser.add_argument("--patches", type=int, default=400)
    parser.add_argument("--batch", type=int, default=32, help="patches per PatchDataset batch")
    parser.add_argument("--prefetch", type=int, default=2)
    parser.add_argument("--model-matmuls", type=int, nargs="+", default=[1, 4],
                        help="sizes of the dummy model step, a dataset run each (4096^2 matmuls per step)")
    parser.add_argument("--cache-gib", type=float, default=8.0)
    parser.add_argument("--device-cache-gib", type=float, default=8.0, help="device cache (GPU memory)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="read_many under each ZARRDIRECT_DECODE side and tensorstore's futures only")
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    wanted = set(args.arrays.split(","))
    table = []
    for name, chunks, codec in ARRAYS:
        if name not in wanted:
            continue
        path = args.work / f"{name}-{args.shape.replace(',', 'x')}"
        if not (path / "zarr.json").exists():
            started = time.perf_counter()
            subprocess.run([str(args.build / "zarrdirect"), "sample", str(path), "--shape", args.shape, "--chunks",
                            chunks, "--codec", codec], check=True, stdout=subprocess.DEVNULL)
            print(f"wrote {path} in {time.perf_counter() - started:.1f}s", flush=True)
        shape = [int(e) for e in args.shape.split(",")]
        regions = patch_regions(shape, args.patch, args.patches, args.seed)
        subprocess.run([str(args.build / "zarrdirect"), "bench", str(path), "--repeat", "1"], stdout=subprocess.DEVNULL)
        row = {"array": name, "shape": args.shape, "patch": args.patch, "patches": args.patches, "device": args.device}
        bench_zarrdirect(path, regions, args, row)
        bench_tensorstore(path, regions, args, row)
        compare(row)
        table.append(row)
        print(json.dumps(row), flush=True)
    columns = sorted({key for row in table for key in row}, key=lambda k: (k not in ("array", "shape", "patch"), k))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row.get(c, "")) for c in columns) + " |" for row in table]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
