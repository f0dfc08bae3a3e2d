"""OME-Zarr pyramid benchmark: zarrdirect.write_multiscale against ome-zarr-py's method.

Dev mode (default, any machine): a uint16 volume in NumPy (default 512^3 = 256 MiB: a smooth
signal plus 5 bits of noise) becomes a 4-level pyramid, zyx mean, zstd-1, 128^3 chunks, NGFF 0.4:
  - zarrdirect.write_multiscale (levels downsampled on the CPU, each from the level above);
  - ome-zarr-py's method re-implemented here with Dask + skimage, as its writer does for Dask
    data: each level is Scaler.resize_image of the previous level's Dask graph (the graph reaches
    back to full resolution): the data cast to float64, skimage.transform.resize(order=1,
    mode="reflect", anti_aliasing=False) block by block over blocks rechunked so the factor gives
    whole output blocks (ome_zarr.dask_utils.resize), cast back, rechunked to 128^3, then
    dask.array.to_zarr(compute=False) into zarr-python 2 (Zstd(1), "/" keys) for every level and
    one dask.compute of all of them. ome-zarr-py halves only y and x; here z too (the same shape
    rule, shape // 2), so both sides do the same work.
Times are wall clock from the call to its return (files in the page cache, no fsync), median of
--repeat runs, outputs removed between runs. Prints a markdown table and the ratio.

    PYTHONPATH=build/python /usr/bin/python3 bench/pyramid_bench.py --work /tmp/zd-pyramid-bench

GPU mode (--gpu, needs CuPy and a GPU; the issue's numbers): a 4 GiB uint16 volume in GPU memory
(1024 x 2048 x 1024), zstd-1, 128^3 chunks:
  - level 0 alone (zarrdirect.write_zarr_from_gpu) vs the 4-level zyx mean pyramid
    (write_multiscale, downsampled on the GPU) in the same run (goal: pyramid <= 1.5x);
  - from that level 0 on disk: the pyramid slab by slab into GPU memory (device="cuda") vs
    reading the array to the GPU plus writing level 0 again (goal: <= 1.3x).
    PYTHONPATH=build/python python3 bench/pyramid_bench.py --gpu --work /mnt/scratch/zd-pyramid
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

import numpy as np

import zarrdirect

LEVELS = 4
CHUNK = 128


def volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A smooth signal plus 5 bits of noise: compresses like microscopy, not like zeros."""
    rng = np.random.default_rng(seed)
    z, y, x = (np.linspace(0, 6.0, n, dtype=np.float32) for n in shape)
    signal = (np.sin(z)[:, None, None] * np.cos(y)[None, :, None] + np.sin(x)[None, None, :] + 2.0) * 8000.0
    noise = rng.integers(0, 32, size=shape, dtype=np.uint16)
    return (signal.astype(np.uint16) + noise).astype(np.uint16)


def timed(run, repeat: int, clean) -> float:
    times = []
    for _ in range(repeat):
        clean()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- ome-zarr-py's method, re-implemented ---------------------------------------------------

def dask_resize(image, output_shape):
    """skimage.transform.resize block by block (what ome_zarr.dask_utils.resize does): input
    blocks rechunked so that each gives a whole number of output pixels, every block resized
    with the same factors, the result rechunked back."""
    import skimage.transform

    factors = np.array(output_shape, dtype=float) / np.array(image.shape, dtype=float)
    input_chunks = tuple(int(c) for c in np.maximum(1, np.round(np.array(image.chunksize) * factors) / factors))
    prepared = image.rechunk(input_chunks)
    output_chunks = tuple(int(c) for c in np.floor(np.array(input_chunks) * factors))

    def resize_block(block):
        shape = tuple(int(n) for n in np.ceil(np.array(block.shape) * factors))
        return skimage.transform.resize(block, shape, order=1, mode="reflect",
                                        anti_aliasing=False).astype(block.dtype)

    out = prepared.map_blocks(resize_block, dtype=image.dtype, chunks=output_chunks)
    return out.rechunk(image.chunksize).astype(image.dtype)


def resize_image(image):
    """Scaler.resize_image with z halved too: float64 cast, resize to shape // 2, cast back."""
    new_shape = tuple(n // 2 for n in image.shape)
    dtype = image.dtype
    return dask_resize(image.astype(float), new_shape).astype(dtype)


def ome_zarr_py_method(data: np.ndarray, path: Path) -> None:
    import dask
    import dask.array as da
    import zarr
    from numcodecs import Zstd

    store = zarr.DirectoryStore(str(path), dimension_separator="/")
    group = zarr.group(store=store, overwrite=True)
    image = da.from_array(data, chunks=(CHUNK,) * 3)
    delayed, datasets = [], []
    for level in range(LEVELS):
        if level > 0:
            image = resize_image(image)
        image = image.rechunk((CHUNK,) * 3)
        delayed.append(da.to_zarr(image, url=store, component=str(level), compute=False, overwrite=True,
                                  compressor=Zstd(level=1), dimension_separator="/"))
        datasets.append({"path": str(level), "coordinateTransformations": [
            {"type": "scale", "scale": [2.0 ** level] * 3}]})
    dask.compute(*delayed)
    group.attrs["multiscales"] = [{"version": "0.4", "axes": [{"name": a, "type": "space"} for a in "zyx"],
                                   "datasets": datasets}]


def zarrdirect_method(data, path: Path, **kwargs) -> dict:
    return zarrdirect.write_multiscale(path, data, levels=LEVELS, method="mean", downsample="zyx", ngff="0.4",
                                       chunks=(CHUNK,) * 3, codec="zstd:1", overwrite=True, **kwargs)


def dev(args) -> None:
    import dask.array  # noqa: F401 - imported before the clock starts
    import skimage.transform  # noqa: F401
    import zarr  # noqa: F401

    shape = tuple(args.shape)
    data = volume(shape)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    mib = data.nbytes / 2**20
    ours = work / "zarrdirect.ome.zarr"
    theirs = work / "ome-zarr-py.ome.zarr"
    clean = lambda *paths: lambda: [shutil.rmtree(p, ignore_errors=True) for p in paths]  # noqa: E731
    level0 = work / "level0.zarr"
    t_level0 = timed(lambda: zarrdirect.save(level0, data, chunks=(CHUNK,) * 3, codec="zstd:1", zarr_format=2),
                     args.repeat, clean(level0))
    t_ours = timed(lambda: zarrdirect_method(data, ours), args.repeat, clean(ours))
    t_theirs = timed(lambda: ome_zarr_py_method(data, theirs), args.repeat, clean(theirs))
    # Same shapes on both sides.
    import zarr
    for level in range(LEVELS):
        a, b = zarr.open_array(str(ours / str(level)), "r"), zarr.open_array(str(theirs / str(level)), "r")
        assert a.shape == b.shape, (level, a.shape, b.shape)
    print(f"\n{LEVELS}-level pyramid of {shape} uint16 ({mib:.0f} MiB), zyx mean, zstd-1, {CHUNK}^3 chunks, NGFF 0.4\n")
    print("| method | time (s) | MiB/s of level 0 |")
    print("|---|---:|---:|")
    print(f"| zarrdirect: level 0 alone (zarrdirect.save, for scale) | {t_level0:.2f} | {mib / t_level0:.0f} |")
    print(f"| zarrdirect.write_multiscale | {t_ours:.2f} | {mib / t_ours:.0f} |")
    print(f"| ome-zarr-py method (Dask + skimage resize, zarr-python 2) | {t_theirs:.2f} | {mib / t_theirs:.0f} |")
    print(f"\nratio: zarrdirect is {t_theirs / t_ours:.1f}x faster")
    print(json.dumps({"mode": "dev", "shape": shape, "zarrdirect_level0_s": t_level0, "zarrdirect_s": t_ours, "ome_zarr_py_method_s": t_theirs,
                      "ratio": t_theirs / t_ours}))


def gpu(args) -> None:
    import cupy

    shape = tuple(args.shape) if args.shape != [512, 512, 512] else (1024, 2048, 1024)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    host = volume((shape[0] // 8, shape[1], shape[2]))
    data = cupy.empty(shape, dtype=cupy.uint16)
    for z in range(0, shape[0], host.shape[0]):  # the volume built in slabs: the host needs 1/8 of it
        data[z:z + host.shape[0]] = cupy.asarray(host) + cupy.uint16(z % 7)
    cupy.cuda.Device().synchronize()
    gib = data.nbytes / 2**30
    level0, pyramid, slabbed, copied = (work / n for n in ("level0.zarr", "pyramid.ome.zarr", "slabbed.ome.zarr",
                                                            "copy0.zarr"))
    clean = lambda *paths: lambda: [shutil.rmtree(p, ignore_errors=True) for p in paths]  # noqa: E731
    results = {}
    results["level0_s"] = timed(lambda: zarrdirect.write_zarr_from_gpu(data, level0, chunks=(CHUNK,) * 3,
                                                                       codec="zstd:1", zarr_format=2),
                                args.repeat, clean(level0))
    results["pyramid_from_gpu_s"] = timed(lambda: zarrdirect_method(data, pyramid), args.repeat, clean(pyramid))
    del data
    cupy.get_default_memory_pool().free_all_blocks()
    source = zarrdirect.open(level0)

    def read_and_write_level0():
        on_gpu = cupy.asarray(source.read(device="cuda"))
        zarrdirect.write_zarr_from_gpu(on_gpu, copied, chunks=(CHUNK,) * 3, codec="zstd:1", zarr_format=2)

    results["read_plus_level0_s"] = timed(read_and_write_level0, args.repeat, clean(copied))
    stats = {}

    def slabs():
        stats.update(zarrdirect_method(source, slabbed, device="cuda", slab_bytes=args.slab_mb << 20))

    results["pyramid_from_disk_slabs_s"] = timed(slabs, args.repeat, clean(slabbed))
    results["slabs"] = stats.get("slabs")
    results["peak_buffer_bytes"] = stats.get("peak_buffer_bytes")
    for key in ("read_seconds", "pyramid_seconds", "read_wait_seconds"):  # the last run's
        results[f"slabs_{key}"] = stats.get(key)
    print(f"\n{gib:.1f} GiB uint16 {shape} in GPU memory, {LEVELS} levels zyx mean, zstd-1, {CHUNK}^3 chunks\n")
    print("| case | time (s) | ratio | goal |")
    print("|---|---:|---:|---:|")
    print(f"| level 0 alone from GPU | {results['level0_s']:.2f} | 1.00 | |")
    r1 = results["pyramid_from_gpu_s"] / results["level0_s"]
    print(f"| 4-level pyramid from GPU | {results['pyramid_from_gpu_s']:.2f} | {r1:.2f} | <= 1.5 |")
    print(f"| read to GPU + write level 0 | {results['read_plus_level0_s']:.2f} | 1.00 | |")
    r2 = results["pyramid_from_disk_slabs_s"] / results["read_plus_level0_s"]
    print(f"| 4-level pyramid from disk, slabs on GPU | {results['pyramid_from_disk_slabs_s']:.2f} | {r2:.2f} | <= 1.3 |")
    print(json.dumps({"mode": "gpu", "shape": shape, **results}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="/tmp/zd-pyramid-bench")
    parser.add_argument("--shape", type=int, nargs=3, default=[512, 512, 512])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--slab-mb", type=int, default=1024)
    args = parser.parse_args()
    gpu(args) if args.gpu else dev(args)


if __name__ == "__main__":
    main()
