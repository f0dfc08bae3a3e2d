"""Smooth a Zarr volume larger than the GPU's memory, block by block, with Dask and zarrdirect.

A 3-D box mean (each voxel becomes the mean of the (2r+1)^3 voxels around it; the volume's edge
repeats outward) needs each block's neighbours: Dask's map_overlap hands every task its block
plus a halo of r voxels from the blocks around it, and trims the halo off the result. zarrdirect
reads each block (into host memory, or straight into the GPU with --device cuda) and writes each
smoothed block (from the GPU without a host copy), so only a few blocks are in memory at a time,
whatever the volume's size: make the volume bigger than the GPU and it still runs.

    python3 examples/dask_smooth.py --make-input in.zarr --shape 256 256 256   # a test volume
    python3 examples/dask_smooth.py in.zarr out.zarr --radius 2                 # NumPy blocks
    python3 examples/dask_smooth.py in.zarr out.zarr --radius 2 --device cuda   # CuPy blocks
    python3 examples/dask_smooth.py in.zarr out.zarr --scheduler distributed --workers 4

The output is float32, stored in the input's shards (or chunks) with zstd level 1.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import zarrdirect
import zarrdirect.dask as zd


def box_mean(block, radius: int):
    """The (2r+1)^3 box mean of a block that carries a halo of `radius` on every side: the
    interior (all but the halo) holds the means, the halo zeros (map_overlap trims it away).
    Sums by cumulative sums along each axis, so it costs the same for any radius, and uses only
    what NumPy and CuPy share (the same code runs on either)."""
    xp = _array_module(block)
    width = 2 * radius + 1
    sums = block.astype(xp.float64)
    for axis in range(sums.ndim):
        # Window sums along `axis` from a running sum with a zero in front: the window ending
        # at i is running[i + 1] - running[i + 1 - width]. Each pass keeps the windows that fit,
        # so the result shrinks by the halo on both sides.
        zero = xp.zeros_like(_along(sums, axis, 0, 1))
        running = xp.concatenate((zero, sums.cumsum(axis=axis)), axis=axis)
        extent = running.shape[axis]
        sums = _along(running, axis, width, extent) - _along(running, axis, 0, extent - width)
    result = xp.zeros(block.shape, dtype=xp.float32)
    inner = tuple(slice(radius, extent - radius) for extent in block.shape)
    result[inner] = (sums / width ** block.ndim).astype(xp.float32)
    return result


def _along(array, axis: int, start: int, stop: int):
    """array[..., start:stop, ...] with the slice on `axis`."""
    index = [slice(None)] * array.ndim
    index[axis] = slice(start, stop)
    return array[tuple(index)]


def _array_module(block):
    """cupy for a CuPy block (imported only then), else numpy."""
    if type(block).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


def smooth(source: str, target: str, radius: int, device: str = "cpu", chunks=None, overwrite: bool = False):
    """Reads `source` with zarrdirect through Dask, smooths it, writes `target`; returns the
    zarrdirect array written."""
    volume = zd.from_zarr(source, chunks=chunks, device=device)
    if any(size < radius for sizes in volume.chunks for size in sizes):
        raise SystemExit(f"blocks must be at least --radius ({radius}) voxels along every axis")
    smoothed = volume.map_overlap(box_mean, depth=radius, boundary="nearest", dtype=np.float32,
                                  radius=radius, meta=volume._meta.astype(np.float32))
    array = zarrdirect.open(source)
    unit = array.shards or array.chunks
    options = {"chunks": array.chunks, "shards": array.shards} if array.shards else {"chunks": unit}
    return zd.to_zarr(smoothed, target, codec="zstd:1", overwrite=overwrite, **options)


def make_input(path: str, shape, chunks, overwrite: bool) -> None:
    """A test volume: smooth waves plus noise, uint16."""
    rng = np.random.default_rng(1)
    grids = np.meshgrid(*(np.arange(extent) for extent in shape), indexing="ij", sparse=True)
    waves = sum(np.sin(grid * (0.05 + 0.03 * axis)) for axis, grid in enumerate(grids)) * 300 + 1000
    data = (waves + rng.integers(0, 200, size=shape)).astype(np.uint16)
    zarrdirect.save(path, data, chunks=chunks, codec="zstd:1", overwrite=overwrite)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", help="the input Zarr array")
    parser.add_argument("target", nargs="?", help="where to write the smoothed array")
    parser.add_argument("--radius", type=int, default=1, help="box half-width (the halo's depth)")
    parser.add_argument("--device", default="cpu", help="cpu (NumPy blocks), cuda or cuda:N (CuPy blocks)")
    parser.add_argument("--chunks", type=int, nargs="+", help="Dask block shape (default: shards or chunks)")
    parser.add_argument("--scheduler", default="threads", choices=["threads", "processes", "distributed"])
    parser.add_argument("--workers", type=int, default=2, help="worker processes for --scheduler distributed")
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--make-input", metavar="PATH", help="write a test volume to PATH and stop")
    parser.add_argument("--shape", type=int, nargs=3, default=(128, 128, 128))
    parser.add_argument("--input-chunks", type=int, nargs=3, default=(32, 32, 32))
    args = parser.parse_args(argv)

    if args.make_input:
        make_input(args.make_input, tuple(args.shape), tuple(args.input_chunks), args.overwrite)
        return 0
    if not args.source or not args.target:
        parser.error("give SOURCE and TARGET (or --make-input PATH)")
    chunks = tuple(args.chunks) if args.chunks else None
    start = time.perf_counter()
    if args.scheduler == "distributed":
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster):
            written = smooth(args.source, args.target, args.radius, args.device, chunks, args.overwrite)
    else:
        import dask

        with dask.config.set(scheduler=args.scheduler):
            written = smooth(args.source, args.target, args.radius, args.device, chunks, args.overwrite)
    seconds = time.perf_counter() - start
    print(f"smoothed {written.shape} (radius {args.radius}, {args.device}) into {written.path} in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
