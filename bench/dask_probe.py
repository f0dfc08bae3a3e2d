"""Where the time of zarrdirect.dask.from_zarr(device="cuda").persist() goes (issue 14), on the
GPU machine: the 4 GiB uint16 array of the read benchmark (128^3 chunks) cut into blocks of
several sizes (chunk blocks, 32 MiB and 128 MiB by default, each aligned to the chunks), and for
each size the same blocks read without Dask (one after another, from 16 threads, from 16 threads
with one reader thread each) beside Dask's persist, and one direct read of the whole array.
Warm page cache, best of --repeat; GB/s of the whole array.

Each row also says how many pinned staging buffers the process's pool allocated and freed
during the timed runs (zarrdirect.pinned_pool_stats(); after the warming run, so a pool that fits
the concurrent reads shows 0 allocations), and the pool's budget.

    python3 bench/dask_probe.py --zarrdirect build-dev/zarrdirect --work /tmp/zd-dask-probe
    ZARRDIRECT_PINNED_POOL_MB=256 python3 bench/dask_probe.py ...   # a pool of one read's staging
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_bench import sample_array  # noqa: E402

THREADS = 16


def best(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def pool_stats(zarrdirect) -> dict:
    # Builds before the pool had a budget have no pinned_pool_stats: report nothing for them.
    query = getattr(zarrdirect, "pinned_pool_stats", None)
    return query() if query else {}


def tidy(row: dict) -> dict:
    """The row with the pool's counts last, after the speeds."""
    counts = {key: row.pop(key) for key in ("pinned allocations", "pinned frees") if key in row}
    return {**row, **counts}


def block_shape(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.split(","))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zarrdirect", required=True, help="the CLI, to write the sample array")
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-dask-probe"))
    parser.add_argument("--codec", nargs="+", default=["none", "zstd"])
    parser.add_argument("--blocks", nargs="+", type=block_shape,
                        default=[(128, 128, 128), (256, 256, 256), (256, 512, 512)],
                        help="block shapes (z,y,x), multiples of the 128^3 chunks: 4, 32 and 128 MiB by default")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    import cupy
    import dask

    import zarrdirect
    import zarrdirect.dask as zd

    for codec in args.codec:
        path = sample_array(args.zarrdirect, args.work, codec, 4.0)
        array = zarrdirect.open(path)
        gb = array.nbytes / 1e9
        whole = cupy.empty(array.shape, dtype=array.dtype)

        def measure(name: str, run, row: dict) -> None:
            def synced():
                run()
                cupy.cuda.runtime.deviceSynchronize()
            synced()  # warm: pools, staging, threads
            before = pool_stats(zarrdirect)
            row[name] = round(gb / best(synced, args.repeat), 2)
            after = pool_stats(zarrdirect)
            if after:
                row.setdefault("pinned allocations", {})[name] = after["allocations"] - before["allocations"]
                row.setdefault("pinned frees", {})[name] = after["frees"] - before["frees"]

        row = {"codec": codec}
        measure("direct read into out=", lambda: array.read(device="cuda", out=whole), row)
        direct = row["direct read into out="]
        print(json.dumps(tidy(row)), flush=True)

        for shape in args.blocks:
            if any(s % c for s, c in zip(shape, array.chunks)):
                print(f"# blocks {shape} are not aligned to the chunks {array.chunks}: skipped", file=sys.stderr)
                continue
            origins = itertools.product(*(range(0, n, s) for n, s in zip(array.shape, shape)))
            blocks = [tuple(slice(o, min(o + s, n)) for o, s, n in zip(origin, shape, array.shape)) for origin in origins]
            outs = [cupy.empty(tuple(b.stop - b.start for b in block), dtype=array.dtype) for block in blocks]
            mib = int(array.dtype.itemsize * shape[0] * shape[1] * shape[2] / 2**20)
            row = {"codec": codec, "block": list(shape), "block MiB": mib, "blocks": len(blocks)}
            pool = ThreadPoolExecutor(THREADS)
            measure("one after another", lambda: [array.read(b, device="cuda", out=o) for b, o in zip(blocks, outs)], row)
            measure(f"{THREADS} threads", lambda: list(pool.map(
                lambda bo: array.read(bo[0], device="cuda", out=bo[1]), zip(blocks, outs))), row)
            measure(f"{THREADS} threads, threads=1 each", lambda: list(pool.map(
                lambda bo: array.read(bo[0], device="cuda", out=bo[1], threads=1), zip(blocks, outs))), row)
            x = zd.from_zarr(path, device="cuda", chunks=shape)

            def persist():
                with dask.config.set(scheduler="threads", num_workers=THREADS):
                    held = x.persist()
                cupy.cuda.runtime.deviceSynchronize()
                del held

            measure("dask persist", persist, row)
            pool.shutdown()
            row["dask % of direct"] = round(100 * row["dask persist"] / direct)
            stats = pool_stats(zarrdirect)
            if stats:
                row["pool budget MiB"] = stats["budget_bytes"] >> 20
                row["pool idle MiB"] = stats["idle_bytes"] >> 20
            outs.clear()
            cupy.get_default_memory_pool().free_all_blocks()
            print(json.dumps(tidy(row)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
