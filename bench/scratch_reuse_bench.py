"""CPU cost of repeated reads of a zstd array with glibc's trimming as Dask's workers set it.

dask.distributed starts its workers with MALLOC_TRIM_THRESHOLD_=65536. Setting that variable turns
off glibc's dynamic mmap threshold, so every buffer above 128 KiB is mmap'ed when allocated and
unmapped when freed: a reader that frees its per-worker buffers after each read faults them in
again, page by page, on the next one. This script reads one ~256 MiB zstd array `--repeat` times
and reports CPU seconds (user + system, resource.getrusage) and minor page faults per GiB read,
both for reads into a new NumPy array each time and for reads into one reused out= buffer (which
leaves only the library's own buffers to fault).

    PYTHONPATH=build/python /usr/bin/python3 bench/scratch_reuse_bench.py [--size 512] [--chunk 128]
        [--repeat 10] [--threads N]

The script re-runs itself with MALLOC_TRIM_THRESHOLD_=65536 when the variable is not set (glibc
reads it at start-up); pass --no-trim to measure without it. Writes its array under $TMPDIR
(removed after).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import zarrdirect


def cpu_and_faults() -> tuple[float, int]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_minflt


def measure(read, repeat: int, nbytes: int) -> tuple[float, float, float]:
    """(CPU seconds per GiB, minor faults per GiB, wall seconds per read) over `repeat` reads."""
    read()  # the first read warms the page cache and the library's threads
    cpu0, faults0 = cpu_and_faults()
    wall0 = time.perf_counter()
    for _ in range(repeat):
        read()
    wall = (time.perf_counter() - wall0) / repeat
    cpu1, faults1 = cpu_and_faults()
    gib = repeat * nbytes / 2**30
    return (cpu1 - cpu0) / gib, (faults1 - faults0) / gib, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=512, help="edge of the cubic uint16 array (512: 256 MiB)")
    parser.add_argument("--chunk", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-trim", action="store_true", help="measure without MALLOC_TRIM_THRESHOLD_")
    options = parser.parse_args()
    if not options.no_trim and os.environ.get("MALLOC_TRIM_THRESHOLD_") != "65536":
        environment = dict(os.environ, MALLOC_TRIM_THRESHOLD_="65536")
        sys.exit(subprocess.call([sys.executable, *sys.argv], env=environment))

    n, c = options.size, options.chunk
    folder = Path(tempfile.mkdtemp(prefix="zd_scratch_bench_"))
    try:
        # Smooth data plus noise: compresses about as a microscopy volume does (zstd-1).
        z, y, x = np.ogrid[:n, :n, :n]
        data = ((z * 7 + y * 3 + x) % 4096).astype(np.uint16) + np.random.default_rng(0).integers(
            0, 64, size=(n, n, n), dtype=np.uint16)
        array = zarrdirect.create(folder / "a", shape=data.shape, dtype=data.dtype, chunks=(c, c, c), codec="zstd:1")
        array.write(data)
        del data, z, y, x
        array = zarrdirect.open(folder / "a")
        out = np.empty(array.shape, array.dtype)
        print(f"array {array.shape} uint16, chunks {c}^3, zstd-1: {array.nbytes / 2**20:.0f} MiB, "
              f"{array.nbytes_stored / 2**20:.0f} MiB stored; MALLOC_TRIM_THRESHOLD_="
              f"{os.environ.get('MALLOC_TRIM_THRESHOLD_', 'unset')}; {options.repeat} reads each")
        for name, read in (("new array each read", lambda: array.read(threads=options.threads)),
                           ("into one out= buffer", lambda: array.read(out=out, threads=options.threads))):
            cpu, faults, wall = measure(read, options.repeat, array.nbytes)
            print(f"{name:22s} {cpu:6.2f} CPU-s/GiB  {faults:9.0f} minor faults/GiB  {wall * 1e3:7.1f} ms/read")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
