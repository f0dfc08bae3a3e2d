"""Selections beyond boxes against the box read they replace, on host and (when a CUDA device is
usable) on the GPU: a stepped read, a step larger than a chunk, and orthogonal index lists, each
against reading the bounding box and stepping it with NumPy/CuPy afterwards.

    PYTHONPATH=build/python python3 bench/selection_bench.py [--size 512] [--chunk 64] [--repeat 5]

Prints one line per case: median seconds of the selection read, of box read + slicing, chunks
visited by each, and that the results are equal. Writes its array under $TMPDIR (removed after).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import zarrdirect


def timed(call, repeat: int):
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    n, c = options.size, options.chunk
    folder = Path(tempfile.mkdtemp(prefix="zarrdirect-selection-bench-"))
    try:
        data = np.random.default_rng(1).integers(0, 60000, size=(n, n, n), dtype=np.uint16)
        out = zarrdirect.create(folder / "a.zarr", shape=data.shape, dtype=data.dtype, chunks=(c, c, c), codec="raw")
        out[...] = data
        arr = zarrdirect.open(folder / "a.zarr")
        rows = np.sort(np.random.default_rng(2).choice(n, size=max(n // 32, 2), replace=False))
        cases = {
            "[::2, 10, ::3]": (slice(None, None, 2), 10, slice(None, None, 3)),
            "[::-1, ::-1, ::-1]": (slice(None, None, -1),) * 3,
            f"[::{2 * c}] (step > chunk)": (slice(None, None, 2 * c),),
        }
        devices = ["cpu"] + (["cuda"] if zarrdirect.cuda_available() else [])
        for device in devices:
            if device == "cuda":
                import cupy
                def host(x):
                    return cupy.asnumpy(cupy.asarray(x))
            else:
                def host(x):
                    return np.asarray(x)
            for name, key in cases.items():
                selection = zarrdirect._region.select(key, arr.shape)
                box = tuple(slice(a, b) for a, b in selection.region)
                seconds, (got, stats) = timed(lambda: arr.read(key, device=device, return_stats=True), options.repeat)
                # The box read, then the same elements gathered by NumPy / CuPy from it.
                picks = []
                for axis_item, (b0, _), extent in zip(selection.axes or [], selection.region, arr.shape):
                    if isinstance(axis_item, int):
                        picks.append(np.array([axis_item - b0]))
                    else:
                        picks.append(np.arange(extent)[slice(*axis_item)] - b0)
                def box_then_slice():
                    whole, box_stats = arr.read(box, device=device, return_stats=True)
                    view = cupy.asarray(whole) if device == "cuda" else whole
                    return view[np.ix_(*picks)].copy(), box_stats
                box_seconds, (_, box_stats) = timed(box_then_slice, options.repeat)
                equal = np.array_equal(host(got), data[key])
                print(f"{device:4s} {name:28s} selection {seconds * 1e3:8.2f} ms ({stats['chunks_total']} chunks)"
                      f"   box+slice {box_seconds * 1e3:8.2f} ms ({box_stats['chunks_total']} chunks)   equal={equal}")
            seconds, got = timed(lambda: arr.oindex.cuda[rows, :, rows] if device == "cuda" else arr.oindex[rows, :, rows],
                                 options.repeat)
            print(f"{device:4s} oindex[{len(rows)} rows, :, {len(rows)} cols]      {seconds * 1e3:8.2f} ms"
                  f"   equal={np.array_equal(host(got), data[rows][:, :, rows])}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
