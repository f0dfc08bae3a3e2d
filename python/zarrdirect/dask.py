"""Dask arrays read and written by zarrdirect, on whichever worker runs each task.

    import zarrdirect.dask as zd
    x = zd.from_zarr("volume.zarr")                    # blocks = shards (or chunks)
    g = zd.from_zarr("volume.zarr", device="cuda")     # CuPy blocks, read straight to the GPU
    zd.to_zarr(x * 2, "doubled.zarr", codec="zstd:1")  # written through zarrdirect's writer

Each block of :func:`from_zarr` is one zarrdirect read of its region, run by the task; the graph
holds only the array's path (a zarrdirect Array pickles as what it points to), so the same graph
runs on the threaded scheduler, the processes scheduler and a dask.distributed cluster.
:func:`to_zarr` creates the array first, then each task writes whole stored files (shards, or
chunks) of it: no two tasks write one file, and every file is replaced atomically, so a task
that is rerun (its worker died) leaves no partial file.

Dask is imported with this module; CuPy only where device blocks are asked for.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import numpy as np

import dask
from dask.delayed import Delayed
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from ._array import Array
from ._errors import InvalidArgumentError
from ._group import Multiscale, open_multiscale
from ._options import parse_device
from ._write import WritableArray, create

__all__ = ["from_zarr", "to_zarr", "storage_chunks", "default_chunks"]


def _open_source(source: Any, level: int | None, storage_options: dict | None = None) -> Array:
    """The zarrdirect Array that `source` (a path, an Array or a Multiscale) names."""
    if isinstance(source, Array):
        if level is not None:
            raise InvalidArgumentError("level= applies to an OME-Zarr image (a path or Multiscale), not an Array")
        return source
    if isinstance(source, Multiscale):
        return source.level(0 if level is None else level)
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidArgumentError(
            f"from_zarr takes a path, a zarrdirect.Array or a zarrdirect.Multiscale, not {type(source).__name__}")
    path = os.fspath(source)
    if level is not None:
        return open_multiscale(path, storage_options=storage_options).level(level)
    from ._array import open as open_array

    return open_array(path, storage_options=storage_options)


def storage_chunks(array: Array) -> tuple[int, ...]:
    """The stored files' shape: the shard shape of a sharded array, else the chunk shape (what
    default blocks are whole multiples of, so that no two blocks read one file)."""
    return array.shards or array.chunks


def default_chunks(array: Array) -> tuple[tuple[int, ...], ...]:
    """from_zarr's blocks when none are given: the shards of a sharded array; else whole
    multiples of the chunk shape, up to Dask's ``array.chunk-size`` in bytes, splitting each axis
    evenly where it can (never splitting a chunk, so no two blocks read one stored file:
    _block_units)."""
    unit = storage_chunks(array)
    # Nothing to grow (an empty or 0-d array), or no fixed item size to grow by.
    if array.shards or array.ndim == 0 or 0 in array.shape or np.dtype(array.dtype).hasobject:
        return da.core.normalize_chunks(tuple(unit), array.shape, dtype=array.dtype)
    target = dask.utils.parse_bytes(dask.config.get("array.chunk-size"))
    units = _block_units(array.shape, array.chunks, np.dtype(array.dtype).itemsize, target)
    return tuple(tuple(min(k * c, n - start) for start in range(0, n, k * c))
                 for n, c, k in zip(array.shape, array.chunks, units))


def _block_units(shape: Sequence[int], chunks: Sequence[int], itemsize: int, target: int) -> list[int]:
    """Chunks per block along each axis: blocks grow, the axis of the smallest block extent first
    (the last axis on ties, which keeps blocks contiguous longest), while they stay within
    `target` bytes, and only to counts that split the axis's chunks into blocks of equal size
    (or a last block at least half the others). Dask's "auto" would cut a 1024 x 1024 x 2048
    array of 128^3 chunks into 54 blocks of 384 and 256 (the last wave of 16 reads a third full:
    75% of one direct read on the H100, docs/BENCHMARKS.md); these are 32 blocks of 128 MiB."""
    grid = [max(1, -(-int(n) // int(c))) for n, c in zip(shape, chunks)]
    units = [1] * len(grid)
    chunk_bytes = itemsize
    for c in chunks:
        chunk_bytes *= int(c)

    def blocks(count: int, k: int) -> int:
        return -(-count // k)

    def balanced(count: int, k: int) -> bool:
        # Equal blocks, or a last one at least half the others; past 8 blocks along the axis a
        # short last one hardly matters.
        return count % k == 0 or 2 * (count % k) >= k or count // k >= 8

    def next_units(d: int) -> int | None:
        # Up to twice as many chunks per block, in steps of an eighth (a few candidates per
        # step, so that a grid of billions of chunks takes a few hundred steps).
        step = max(1, units[d] // 8)
        for k in range(units[d] + 1, min(grid[d], 2 * units[d]) + 1, step):
            if blocks(grid[d], k) < blocks(grid[d], units[d]) and balanced(grid[d], k):
                return k
        return None

    while True:
        volume = chunk_bytes
        for k in units:
            volume *= k
        for d in sorted(range(len(grid)), key=lambda d: (units[d] * int(chunks[d]), -d)):
            nxt = next_units(d)
            if nxt is not None and volume // units[d] * nxt <= target:
                units[d] = nxt
                break
        else:
            return units


def _device_kind(device: Any) -> str:
    kind, _ = parse_device(device)
    return kind


class _BlockReads:
    """How many block reads run at once in this process, to share the cores among them.

    Dask's threaded scheduler runs a task per core, and each zarrdirect read would start its own
    thread per core: 16 reads of 16 threads each contend for 16 cores. Measured on the H200
    (docs/BENCHMARKS.md, session 10, bench/dask_probe.py): 16 concurrent reads of 32 MiB raw
    blocks reached 26.5 GB/s with their default threads and 41.2 with one thread each (128 MiB
    blocks: 23.2 against 48.7; zstd blocks: 8.6 against 9.3). So a block read takes the cores
    divided by the reads running when it starts, itself included: a lone read (the synchronous
    scheduler, one big block) still gets them all, unless ZARRDIRECT_THREADS sets fewer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    @contextmanager
    def share(self) -> Iterator[int]:
        """The reader threads for a read starting now, counted as running until it ends."""
        with self._lock:
            self._running += 1
            running = self._running
        try:
            yield min(max(1, (os.cpu_count() or 1) // running), _configured_threads())
        finally:
            with self._lock:
                self._running -= 1


_block_reads = _BlockReads()


def _configured_threads() -> int:
    """ZARRDIRECT_THREADS when set to a positive integer: a ceiling the sharing keeps (a worker
    told to read with one thread does); else no ceiling."""
    value = os.environ.get("ZARRDIRECT_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else sys.maxsize


def _read_block(array: Array, region: tuple, device: Any) -> Any:
    """One block: a zarrdirect read of `region` into host memory (NumPy) or the GPU (CuPy), with
    its share of the cores (_BlockReads)."""
    kind, ordinal = parse_device(device)
    with _block_reads.share() as threads:
        if kind == "cpu":
            return array.read(region, threads=threads)
        import cupy

        # Into a CuPy array from CuPy's memory pool (no cudaMalloc per block), on the GPU `device`
        # names; the device string goes to the read as given.
        shape = tuple(piece.stop - piece.start for piece in region)
        with cupy.cuda.Device(ordinal if ordinal >= 0 else cupy.cuda.runtime.getDevice()):
            out = cupy.empty(shape, dtype=array.dtype)
            if out.size:
                array.read(region, device=device, out=out, threads=threads)
        return out


def _meta(dtype: np.dtype, ndim: int, device: Any) -> Any:
    if _device_kind(device) == "cpu":
        return np.empty((0,) * ndim, dtype=dtype)
    import cupy

    return cupy.empty((0,) * ndim, dtype=dtype)


def _block_slices(chunks: tuple[tuple[int, ...], ...]) -> tuple[list[list[slice]], list[int]]:
    """Per axis, the slice of each block along it."""
    per_axis = []
    for sizes in chunks:
        starts = np.cumsum((0,) + tuple(sizes))
        per_axis.append([slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])])
    return per_axis, [len(sizes) for sizes in chunks]


def from_zarr(source: Any, chunks: Any = None, device: Any = "cpu", level: int | None = None,
              name: str | None = None, storage_options: dict | None = None) -> da.Array:
    """A Dask array over the Zarr array `source` (a folder, a zarrdirect.Array, or -- with
    `level` -- an OME-Zarr image's level), each block read by zarrdirect in the task that needs it.

    chunks: Dask's chunks argument (a shape, "auto", per-axis tuples, ...). By default the shard
        shape of a sharded array; for an unsharded one, whole multiples of its chunk shape grown
        to about Dask's ``array.chunk-size`` (128 MiB unless configured), as ``da.from_array``'s
        "auto" does: Dask's per-task cost outweighs reading a few MiB (on an H100, persisting a 4
        GiB array of 4 MiB chunks block per chunk reached 30% of one direct read, in blocks of
        128 MiB 88%). Blocks that cut through stored chunks work, but read (and decode) those
        chunks once per block.
    device: "cpu" for NumPy blocks; "cuda" or "cuda:N" for CuPy blocks read straight into that
        GPU (``meta`` is then a CuPy array). CuPy is imported only then.
    level: the resolution level of an OME-Zarr multiscale image (0 the full resolution).
    storage_options: for a URL, its headers, bearer token, concurrency and retries (as
        zarrdirect.open takes them); the tasks reopen the array with them on the workers.
    name: the Dask key prefix; by default one derived from the path, the stored files' state,
        the chunks and the device (so a written array gets new keys: no stale cached blocks).

    Raises zarrdirect errors for a missing or unreadable array at once; a block's read errors
    surface when it is computed.
    """
    array = _open_source(source, level, storage_options)
    _device_kind(device)  # refuse a bad device string here, not in every task
    if chunks is None:
        normalized = default_chunks(array)
    else:
        normalized = da.core.normalize_chunks(chunks, array.shape, dtype=array.dtype,
                                              previous_chunks=storage_chunks(array))
    if name is None:
        name = "zarrdirect-from-zarr-" + tokenize(array, normalized, str(device))
    per_axis, counts = _block_slices(normalized)
    graph = {}
    for index in np.ndindex(*counts):
        region = tuple(per_axis[axis][i] for axis, i in enumerate(index))
        graph[(name,) + tuple(index)] = (_read_block, array, region, device)
    layers = HighLevelGraph.from_collections(name, graph, dependencies=())
    return da.Array(layers, name, normalized, meta=_meta(array.dtype, array.ndim, device))


def _aligned_chunks(chunks: tuple[tuple[int, ...], ...], unit: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """`chunks` where every block boundary (but the array's end) falls on a multiple of `unit`;
    an axis that does not is given blocks of the largest multiple of its unit not above its
    largest block (at least one unit), so that no two blocks share a stored file."""
    aligned = []
    for sizes, step in zip(chunks, unit):
        boundaries = np.cumsum(sizes)[:-1]
        if step <= 0 or all(int(b) % step == 0 for b in boundaries):
            aligned.append(tuple(sizes))
            continue
        block = max(step, (max(sizes) // step) * step)
        extent = int(sum(sizes))
        aligned.append(tuple(min(block, extent - start) for start in range(0, extent, block)) or (0,))
    return tuple(aligned)


def _write_block(array: WritableArray, block: Any, region: tuple) -> None:
    """Writes one block; host blocks as NumPy arrays, device blocks (CuPy: anything with
    __cuda_array_interface__) from device memory, with no host round trip."""
    array.write(block, region)
    return None


def _done(*_: Any) -> None:
    return None


def to_zarr(source: da.Array, path: str | os.PathLike, compute: bool = True, overwrite: bool = False,
            **create_options: Any) -> Any:
    """Writes the Dask array `source` to a new Zarr array at `path` through zarrdirect's writer.

    create_options: zarrdirect.create's (chunks, shards, codec, zarr_format, fill_value,
        attributes, dimension_names, level, order, filters, dtype). chunks default to the Dask
        array's first block along each axis, as dask.array.to_zarr does.
    The array is created (metadata written) at once; then, where the Dask blocks do not fall on
    the stored files' boundaries (shards, or chunks), the array is rechunked so that they do, and
    each block is written by one task: no two tasks write one file.
    Blocks may be NumPy or CuPy arrays (written from the GPU without a host copy).
    compute: True writes now and returns the open zarrdirect array (mode "r+"); False returns a
        dask.delayed.Delayed that writes when computed (the array exists already, empty).
    overwrite: replace what is at `path` (zarrdirect.create's overwrite).
    """
    if not isinstance(source, da.Array):
        raise InvalidArgumentError(f"to_zarr takes a dask.array.Array, not {type(source).__name__}")
    if any(np.isnan(extent) for sizes in source.chunks for extent in sizes):
        raise InvalidArgumentError("to_zarr needs known chunk sizes: call compute_chunk_sizes() first")
    options = dict(create_options)
    if options.get("shards") is not None:
        options.setdefault("chunks", options["shards"])  # one chunk per shard unless told
    # An empty axis has one block of 0 elements; its chunk is then 1 (0 was refused as a chunk).
    options.setdefault("chunks", tuple(max(sizes[0], 1) if sizes else 1 for sizes in source.chunks) or None)
    options.setdefault("dtype", source.dtype)
    target = create(path, shape=source.shape, overwrite=overwrite, **options)
    if source.dtype != target.dtype:
        source = source.astype(target.dtype)  # in the blocks' own memory: the GPU for CuPy blocks
    aligned = _aligned_chunks(source.chunks, target.storage_unit)
    if aligned != source.chunks:
        source = source.rechunk(aligned)
    # The target's token holds its files' state just after creation: a second to_zarr of the
    # same data to the same path (overwrite) gets new keys, never a cached "done".
    name = "zarrdirect-to-zarr-" + tokenize(source, target, options)
    per_axis, counts = _block_slices(source.chunks)
    graph = {}
    for index in np.ndindex(*counts):
        region = tuple(per_axis[axis][i] for axis, i in enumerate(index))
        graph[(name,) + tuple(index)] = (_write_block, target, (source.name,) + tuple(index), region)
    final = name + "-done"
    graph[final] = (_done, list(graph.keys()))
    layers = HighLevelGraph.from_collections(final, graph, dependencies=[source])
    delayed = Delayed(final, layers)
    if not compute:
        return delayed
    delayed.compute()
    return target
