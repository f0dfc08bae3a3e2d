"""The tensorstore peer: read an array (or a region) into host memory with tensorstore, then copy
it to the GPU with CuPy, as users do today.

    python3 tensorstore_read.py ARRAY [--region 384:640,384:640,896:1152] [--repeat N] [--cold]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def parse_region(text):
    if not text:
        return ()
    out = []
    for part in text.split(","):
        start, stop = part.split(":")
        out.append(slice(int(start) if start else None, int(stop) if stop else None))
    return tuple(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("array", type=Path)
    parser.add_argument("--region", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()
    import tensorstore as ts
    driver = "zarr3" if (args.array / "zarr.json").exists() else "zarr"
    cupy = None
    if args.device == "cuda":
        import cupy
    region = parse_region(args.region)
    # Opened once, outside the timing, as zarrdirect's bench does. The default context's cache
    # pool holds nothing (total_bytes_limit 0), so every read goes back to the files: warm runs
    # measure the page cache, not a tensorstore cache.
    store = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(args.array)}},
                    context=ts.Context()).result()
    for run in range(args.repeat):
        if args.cold:
            drop_caches()
        start = time.perf_counter()
        host = store[region].read().result() if region else store.read().result()
        if cupy is not None:
            device = cupy.asarray(host)
            cupy.cuda.runtime.deviceSynchronize()
            nbytes = device.nbytes
            del device
        else:
            nbytes = host.nbytes
        seconds = time.perf_counter() - start
        print(json.dumps({"tool": "tensorstore", "run": run + 1, "bytes": int(nbytes), "seconds": seconds,
                          "gbps": nbytes / seconds / 1e9}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
