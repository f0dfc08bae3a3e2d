"""Where the time of zarrdirect.dask.from_zarr(device="cuda").persist() goes (issue 14), on the
GPU machine: the same 1,024 blocks (the 4 GiB uint16 array of the read benchmark, 128^3 chunks)
read without Dask, one after another and from 16 threads, beside one direct read of the whole
array and Dask's persist, warm page cache, best of --repeat.

    python3 bench/dask_probe.py --zarrdirect build-dev/zarrdirect --work /tmp/zd-dask-probe
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_bench import sample_array  # noqa: E402


def best(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zarrdirect", required=True, help="the CLI, to write the sample array")
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-dask-probe"))
    parser.add_argument("--codec", nargs="+", default=["none", "zstd"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import cupy
    import dask

    import zarrdirect
    import zarrdirect.dask as zd

    for codec in args.codec:
        path = sample_array(args.zarrdirect, args.work, codec, 4.0)
        array = zarrdirect.open(path)
        gb = array.nbytes / 1e9
        blocks = [tuple(slice(o, o + c) for o, c in zip(origin, array.chunks))
                  for origin in __import__("itertools").product(*(range(0, s, c) for s, c in zip(array.shape, array.chunks)))]
        outs = [cupy.empty(array.chunks, dtype=array.dtype) for _ in blocks]
        whole = cupy.empty(array.shape, dtype=array.dtype)

        def sync(run):
            def wrapped():
                run()
                cupy.cuda.runtime.deviceSynchronize()
            return wrapped

        cases = {
            "direct read into out=": lambda: array.read(device="cuda", out=whole),
            "1024 blocks, one after another": lambda: [array.read(b, device="cuda", out=o) for b, o in zip(blocks, outs)],
            "1024 blocks, 16 threads": lambda: list(ThreadPoolExecutor(16).map(
                lambda bo: array.read(bo[0], device="cuda", out=bo[1]), zip(blocks, outs))),
            "1024 blocks, 16 threads, threads=1 each": lambda: list(ThreadPoolExecutor(16).map(
                lambda bo: array.read(bo[0], device="cuda", out=bo[1], threads=1), zip(blocks, outs))),
            "1024 blocks, 16 threads, new CuPy array each": lambda: list(ThreadPoolExecutor(16).map(
                lambda b: array.read(b, device="cuda"), blocks)),
        }
        x = zd.from_zarr(path, device="cuda")

        def persist():
            with dask.config.set(scheduler="threads"):
                held = x.persist()
            cupy.cuda.runtime.deviceSynchronize()
            del held

        cases["dask persist"] = persist
        row = {"codec": codec, "blocks": len(blocks)}
        for name, run in cases.items():
            run = sync(run)
            run()  # warm: pools, staging, threads
            row[name] = round(gb / best(run, args.repeat), 2)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
