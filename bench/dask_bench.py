"""zarrdirect through Dask: worker processes on the host, and device blocks on one GPU.

Host mode (the default; the development machine): a dask.distributed LocalCluster of 1 worker
process against one of 2, reading a whole array into the workers' host memory through
zarrdirect.dask.from_zarr (``persist``, and ``.sum()``). Each worker has --dask-threads Dask
threads and reads with --read-threads zarrdirect threads (ZARRDIRECT_THREADS), so the second
process adds the same parallelism again. Warm page cache (one untimed pass first); median of
--repeat runs; GB/s = the array's bytes / seconds. Also the CPU seconds per GiB the reading
processes spent (the workers' process_time), which a shared machine does not distort.

    /usr/bin/python3 bench/dask_bench.py --work /tmp/zd-dask [--size-gib 1] [--codec none zstd]

GPU mode (--gpu; needs CuPy and a device): on the read benchmark's 4 GiB uint16 arrays
(uncompressed 128^3 and zstd, `zarrdirect sample` as bench/gpu_bench.py writes them),
zarrdirect.dask.from_zarr(path, device="cuda").persist() on the threaded scheduler against one
direct ``read(device="cuda")`` in the same run, and against dask.array.from_zarr through
zarr-python (on a Zarr v2 copy, zarr 2 reading no v3) with map_blocks(cupy.asarray) where zarr
imports and can decode the array, and tensorstore through dask.array.from_array.

    PYTHONPATH=build/python:/path/to/debian-dask python3 bench/dask_bench.py --gpu \\
        --zarrdirect build/zarrdirect --work /tmp/zd-bench --size-gib 4

Prints one JSON line per measurement and a summary table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CODECS = {"none": "raw-128", "zstd": "zstd-128"}  # `zarrdirect sample --codec` -> folder name


def sample_array(zarrdirect_cli: str, work: Path, codec: str, size_gib: float) -> Path:
    """The built-in sample (uint16, smooth signal plus 5 bits of noise), 128^3 chunks, written
    once by the CLI; a shape of `size_gib` GiB (1024 x 1024 x n, n a multiple of 128)."""
    depth = max(128, int(round(size_gib * 2**30 / (1024 * 1024 * 2) / 128)) * 128)
    shape = f"{depth},1024,1024" if size_gib < 4 else "1024,1024,2048"
    path = work / (CODECS[codec] if size_gib >= 4 else f"{CODECS[codec]}-{depth}")
    if not (path / "zarr.json").exists():
        started = time.perf_counter()
        subprocess.run([zarrdirect_cli, "sample", str(path), "--shape", shape, "--chunks", "128,128,128",
                        "--codec", codec], check=True)
        print(f"# wrote {path} in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return path


def timed(run, repeat: int, cpu_clock=time.process_time) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds (`cpu_clock`: every thread of the processes doing the work)
    of each of `repeat` runs. On a shared machine the wall time says how fast it went, the CPU
    time how much work it took."""
    times, cpu = [], []
    for _ in range(repeat):
        cpu_start = cpu_clock()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
        cpu.append(cpu_clock() - cpu_start)
    return times, cpu


def report(rows: list[dict], measured, **row) -> dict:
    row["seconds"], row["cpu_seconds"] = measured
    row["gbps"] = row["bytes"] / statistics.median(row["seconds"]) / 1e9
    row["cpu_s_per_gib"] = statistics.median(row["cpu_seconds"]) / (row["bytes"] / 2**30)
    rows.append(row)
    print(json.dumps(row), flush=True)
    return row


# -- host mode --------------------------------------------------------------------------------

@contextlib.contextmanager
def worker_malloc(mode: str):
    """The worker processes' glibc malloc settings. "dask": as dask.distributed spawns workers
    (MALLOC_TRIM_THRESHOLD_=65536, which also turns off glibc's adaptive mmap threshold, so
    every buffer of a few MiB a read frees goes back to the kernel and the next read faults it in
    again). "glibc": without that variable (glibc's defaults)."""
    import dask

    if mode == "dask":
        yield
        return
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    # The nanny sets its pre-spawn variables in this process too (it spawns the workers).
    saved = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            yield
    finally:
        if saved is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = saved


def host_mode(args) -> list[dict]:
    os.environ["ZARRDIRECT_THREADS"] = str(args.read_threads or 1)  # inherited by the worker processes
    import zarrdirect
    import zarrdirect.dask as zd
    from distributed import Client, LocalCluster, wait

    rows = []
    for codec in args.codec:
        path = sample_array(args.zarrdirect, args.work, codec, args.size_gib)
        array = zarrdirect.open(path)
        nbytes = array.nbytes
        # The same read without Dask, in this process, for scale.
        report(rows, timed(lambda: array.read(threads=args.read_threads or 1), args.repeat),
               mode="direct read, this process", codec=codec, workers=0, bytes=nbytes)
        for workers, malloc in [(w, m) for m in args.malloc for w in args.workers]:
            with worker_malloc(malloc), LocalCluster(n_workers=workers, processes=True, threads_per_worker=args.dask_threads,
                              dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
                runs = iter(range(10**6))

                def fresh():
                    # New keys every run: a result the cluster still holds is never reused.
                    return zd.from_zarr(path, chunks=args.blocks,
                                        name=f"bench-read-{workers}-{codec}-{malloc}-{next(runs)}")

                x = fresh()

                def persist() -> None:
                    held = client.persist(fresh())
                    wait(held)
                    client.cancel(held)
                    del held

                def total() -> None:
                    client.compute(fresh().sum()).result()

                def workers_cpu() -> float:
                    return sum(client.run(time.process_time).values())

                persist()  # warm: workers started, page cache filled
                report(rows, timed(persist, args.repeat, workers_cpu), mode="persist", codec=codec,
                       workers=workers, malloc=malloc, bytes=nbytes, blocks=x.npartitions)
                report(rows, timed(total, args.repeat, workers_cpu), mode="sum", codec=codec, workers=workers,
                       malloc=malloc, bytes=nbytes, blocks=x.npartitions)
    print("\n| codec | measure | " + " | ".join(f"{w} proc GB/s (CPU s/GiB)" for w in args.workers) + " | ratio |")
    print("|---|---|" + "---|" * (len(args.workers) + 1))
    for codec in args.codec:
        direct = next(r for r in rows if r["codec"] == codec and r["workers"] == 0)
        print(f"| {codec} | direct read, 1 thread, no Dask | {direct['gbps']:.2f} ({direct['cpu_s_per_gib']:.2f}) |")
        for mode, malloc in [(mode, m) for m in args.malloc for mode in ("persist", "sum")]:
            found = [next(r for r in rows if r["codec"] == codec and r["mode"] == mode and r["workers"] == w
                          and r.get("malloc") == malloc) for w in args.workers]
            print(f"| {codec} | {mode}, malloc {malloc} | " + " | ".join(f"{r['gbps']:.2f} ({r['cpu_s_per_gib']:.2f})" for r in found)
                  + f" | {found[-1]['gbps'] / found[0]['gbps']:.2f}x |")
    return rows


# -- GPU mode ---------------------------------------------------------------------------------

class _TensorstoreBlocks:
    """A tensorstore array as dask.array.from_array wants it: indexing reads into NumPy."""

    def __init__(self, path: Path) -> None:
        import tensorstore as ts

        self.store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()
        self.shape = tuple(self.store.shape)
        self.dtype = np.dtype(self.store.dtype.numpy_dtype)
        self.ndim = len(self.shape)

    def __getitem__(self, key):
        return self.store[key].read().result()


def v2_copy(source: Path, work: Path, codec: str) -> Path:
    """A Zarr v2 copy of `source` (same chunks and codec) for zarr-python 2, written once."""
    import zarrdirect

    target = work / (source.name + "-v2")
    if (target / ".zarray").exists():
        return target
    array = zarrdirect.open(source)
    copy = zarrdirect.create(target, shape=array.shape, dtype=array.dtype, chunks=array.chunks,
                             codec="raw" if codec == "none" else "zstd:1", zarr_format=2, overwrite=True)
    step = array.chunks[0]
    for start in range(0, array.shape[0], step):
        copy[start:start + step] = array[start:start + step]
    return target


def gpu_mode(args) -> list[dict]:
    if args.read_threads:
        os.environ["ZARRDIRECT_THREADS"] = str(args.read_threads)
    import cupy
    import dask
    import dask.array as da

    import zarrdirect
    import zarrdirect.dask as zd

    def synchronized(run):
        def wrapped():
            result = run()
            cupy.cuda.runtime.deviceSynchronize()
            return result
        return wrapped

    rows = []
    pool = cupy.get_default_memory_pool()
    for codec in args.codec:
        path = sample_array(args.zarrdirect, args.work, codec, args.size_gib)
        array = zarrdirect.open(path)
        nbytes = array.nbytes
        array.read(threads=None)  # warm the page cache

        def direct():
            data = array.read(device="cuda")
            del data

        synchronized(direct)()  # warm: CuPy's pool and the pinned staging grow in the first run
        report(rows, timed(synchronized(direct), args.repeat), mode="direct read(device='cuda')", codec=codec,
               bytes=nbytes)

        def persisting(collection):
            """A run that persists `collection` on the threaded scheduler and waits for the GPU.
            The scheduler keeps nothing between computes: every persist reads again. CuPy's pool
            keeps the blocks' memory between runs, as the direct read's pool does (a pipeline that
            persists again reuses it; freeing it timed cudaMalloc instead)."""
            def run():
                with dask.config.set(scheduler="threads", num_workers=args.dask_threads or None):
                    held = collection.persist()
                cupy.cuda.runtime.deviceSynchronize()
                del held
            return run

        x = zd.from_zarr(path, chunks=args.blocks, device="cuda")
        persist = persisting(x)
        persist()
        report(rows, timed(persist, args.repeat), mode="zarrdirect.dask from_zarr(device='cuda').persist()",
               codec=codec, bytes=nbytes, blocks=x.npartitions)

        pool.free_all_blocks()
        # The peers: zarr-python through dask.array.from_zarr where it can read the array (on
        # the GPU machine, zarr 2 with numcodecs' pure-Python modules reads the uncompressed
        # array only: scripts/pack_device_pylib.sh), and tensorstore through from_array always.
        peers = []
        try:
            import numcodecs
            import zarr

            if codec != "none":  # before writing a 4 GiB copy that zarr-python could not read
                numcodecs.get_codec({"id": "zstd", "level": 1}).encode(b"probe")
            peer_path = v2_copy(path, args.work, codec)
            zarr.open(str(peer_path), mode="r")  # refuses a codec numcodecs cannot run here
            peers.append(("zarr-python", "dask.array.from_zarr (zarr-python) + map_blocks(cupy.asarray)",
                          da.from_zarr(str(peer_path), chunks=args.blocks or array.chunks).map_blocks(cupy.asarray)))
        except (ImportError, ValueError, NotImplementedError) as why:
            print(f"# zarr-python cannot read the {codec} array here: {why}", file=sys.stderr, flush=True)
        peers.append(("tensorstore", "tensorstore via dask.array.from_array + map_blocks(cupy.asarray)",
                      da.from_array(_TensorstoreBlocks(path), chunks=args.blocks or array.chunks).map_blocks(cupy.asarray)))

        for peer_id, peer_name, peer in peers:
            peer_persist = persisting(peer)
            peer_persist()
            report(rows, timed(peer_persist, args.repeat), mode=peer_name, peer=peer_id, codec=codec, bytes=nbytes)
            pool.free_all_blocks()
    print("\n| codec | direct GB/s | zarrdirect.dask GB/s | % of direct | zarr-python GB/s | / zarr-python "
          "| tensorstore GB/s | / tensorstore |")
    print("|---|---|---|---|---|---|---|---|")
    for codec in args.codec:
        ours_rows = [r for r in rows if r["codec"] == codec and "peer" not in r]
        direct, ours = ours_rows[0]["gbps"], ours_rows[1]["gbps"]
        cells = []
        for peer_id in ("zarr-python", "tensorstore"):
            found = [r["gbps"] for r in rows if r["codec"] == codec and r.get("peer") == peer_id]
            cells += [f"{found[0]:.2f}", f"{ours / found[0]:.1f}x"] if found else ["-", "-"]
        print(f"| {codec} | {direct:.2f} | {ours:.2f} | {100 * ours / direct:.0f}% | " + " | ".join(cells) + " |")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", action="store_true", help="GPU mode (CuPy blocks; see above)")
    parser.add_argument("--zarrdirect", default="build/zarrdirect", help="the CLI, to write the sample arrays")
    parser.add_argument("--work", type=Path, default=Path("/tmp/zd-dask"))
    parser.add_argument("--size-gib", type=float, default=None, help="array size (default 1 host, 4 GPU)")
    parser.add_argument("--codec", nargs="+", default=["none", "zstd"], choices=sorted(CODECS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="host mode: cluster sizes")
    parser.add_argument("--dask-threads", type=int, default=None,
                        help="Dask threads per worker (host mode default 1; GPU mode default Dask's)")
    parser.add_argument("--read-threads", type=int, default=None,
                        help="ZARRDIRECT_THREADS per read (host mode default 1; GPU mode default the library's)")
    parser.add_argument("--malloc", nargs="+", default=["dask", "glibc"], choices=["dask", "glibc"],
                        help="host mode: worker malloc settings (see worker_malloc)")
    parser.add_argument("--blocks", type=int, nargs=3, default=None,
                        help="Dask block shape (default: the stored chunks, 128^3)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.size_gib is None:
        args.size_gib = 4.0 if args.gpu else 1.0
    if not args.gpu and args.dask_threads is None:
        args.dask_threads = 1
    if args.blocks:
        args.blocks = tuple(args.blocks)
    (gpu_mode if args.gpu else host_mode)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
