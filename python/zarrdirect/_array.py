"""zarrdirect.Array: one Zarr array, read into NumPy or GPU memory."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import _native
from ._errors import InvalidArgumentError, InvalidIndexError, InvalidMetadataError, NotFoundError, ZarrdirectError
from ._options import parse_device, parse_stream, parse_threads, progress_callback
from ._fancy import plan_index
from ._out import target_of
from ._region import Points, Selection, parse_region_string, select, select_points
from ._storage import kept, native_store_options

__all__ = ["Array", "open"]


def _selection(region: Any, shape: tuple[int, ...]) -> Selection:
    """A read's region argument -- None, an index tuple, a slice or int, or "0:10,:,5" -- as a box."""
    if region is None:
        return select((), shape)
    if isinstance(region, str):
        return select(parse_region_string(region), shape)
    return select(region, shape)


class Array:
    """An open Zarr array (v2 or v3). Cheap to keep around; safe to read from several threads.

    ``arr[10:20, :, 5]`` reads into a NumPy array, ``arr.cuda[10:20, :, 5]`` into GPU memory
    (a :class:`zarrdirect.DeviceArray`); :meth:`read` takes the same regions plus an ``out=``
    to fill, a CUDA stream, a thread count and a progress callback.
    """

    __slots__ = ("_native", "_metadata", "_dtype", "_name", "_storage_options")

    def __init__(self, native: "_native.Array", name: str | None = None,
                 storage_options: dict | None = None) -> None:
        self._native = native
        self._metadata = native.metadata
        self._dtype = np.dtype(self._metadata["typestr"])
        self._name = name
        # What it was opened with (HTTP headers, token...): kept so that it reopens the same way
        # where it is unpickled.
        self._storage_options = storage_options

    # -- what the array is --------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._metadata["shape"])

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape: for a sharded array the inner chunks of each shard (the unit a codec
        chain decodes), as zarr-python 3 reports it; :attr:`shards` is then the shard shape."""
        return inner_chunk_shape(self._metadata)

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape (the unit of storage, one file each) of a sharded array, else None."""
        return shard_shape(self._metadata)

    @property
    def storage_unit(self) -> tuple[int, ...]:
        """The shape of one stored file's region: :attr:`shards` when sharded, else :attr:`chunks`.
        Work split on these boundaries (Dask blocks, parallel writers) never shares a file."""
        return tuple(self._metadata["chunks"])

    @property
    def dtype(self) -> np.dtype:
        """The element type in native byte order, which is how every read hands elements out."""
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._metadata["shape"])

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.uint64))

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def zarr_format(self) -> int:
        return self._metadata["zarr_format"]

    @property
    def attrs(self) -> "Attributes":
        """The user attributes (v2 .zattrs, v3 "attributes"): a dict holding a fresh copy. On an
        array open for writing (``zarrdirect.open(path, mode="r+")``, ``zarrdirect.create``),
        setting, deleting, ``update()``, ``put()`` and ``clear()`` save at once, as zarr-python's
        Attributes does; on one opened for reading they are refused."""
        from ._attributes import Attributes

        return Attributes(_json_copy(self._metadata["attributes"]), self._attribute_saver(),
                          self._attributes_refusal())

    def _attribute_saver(self):
        """How attrs saves a change, or None where the array is read-only."""
        return None

    def _attributes_refusal(self) -> str:
        return (f"{self.path} was opened read-only: open it with zarrdirect.open(path, mode='r+') to change "
                f"its attributes")

    def _save_attributes(self, set_json: str, remove: list, replace: bool) -> dict:
        _native.update_attributes(self._native, set_json, remove, replace)
        self._metadata = self._native.metadata
        return _json_copy(self._metadata["attributes"])

    @property
    def fill_value(self) -> np.generic:
        """What missing chunks read as, as a NumPy scalar of :attr:`dtype`."""
        return np.frombuffer(self._native.fill_value_bytes, dtype=self._dtype)[0]

    @property
    def dimension_names(self) -> tuple | None:
        names = self._metadata["dimension_names"]
        return None if names is None else tuple(names)

    @property
    def info(self) -> dict:
        """Everything zarrdirect knows about the array, JSON-friendly: the same schema (and values)
        as `zarrdirect info --json` (path, zarr_format, node_type, shape, dtype, chunks, shards,
        order, fill_value, codecs, dimension_names, attributes, chunks_stored, chunks_total,
        bytes_stored, nbytes). Lists the array's folder for the storage counts."""
        return self._native.describe()

    @property
    def nbytes_stored(self) -> int:
        """Bytes of the chunk (or shard) files a read would use, as zarr-python's nbytes_stored
        counts stored chunks (metadata files are not included)."""
        return int(self._native.bytes_stored())

    @property
    def nchunks_initialized(self) -> int:
        """Chunk files stored, as zarr-python counts them (for a sharded array, shard files:
        the unit of storage). Lists the array's folder."""
        return int(self._native.chunks_stored())

    # -- what zarr-python users reach for ------------------------------------------------------
    #
    # Codec configurations come back as plain dicts in numcodecs' form ({"id": "zstd", "level": 1}),
    # the form zarr-python 2 stores and its codecs' get_config() returns; numcodecs is not imported.

    @property
    def name(self) -> str | None:
        """zarr-python's name: "/a/b" for an array reached from a group (or an image level), None
        for one opened by its own path, as zarr-python 2 reports an array at a store's root."""
        return self._name

    @property
    def basename(self) -> str | None:
        """The last part of :attr:`name`, None when there is no name."""
        return None if self._name is None else self._name.split("/")[-1]

    @property
    def read_only(self) -> bool:
        """True: arrays are opened for reading."""
        return True

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    @property
    def nchunks(self) -> int:
        """How many chunks of :attr:`chunks` the array has, stored or not (for a sharded array,
        inner chunks: the shards' count is ``prod(shard_grid_shape)``)."""
        return int(np.prod(self.cdata_shape, dtype=np.uint64))

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """Chunks of :attr:`chunks` along each dimension (zarr-python 2's name for the chunk
        grid's shape)."""
        return tuple(-(-extent // chunk) if chunk else 0 for extent, chunk in zip(self.shape, self.chunks))

    @property
    def shard_grid_shape(self) -> tuple[int, ...]:
        """Stored files along each dimension: shards when sharded, else chunks (= cdata_shape)."""
        return tuple(self._metadata["chunk_grid_shape"])

    @property
    def order(self) -> str:
        """"C" or "F": the layout of elements inside a stored chunk, as zarr-python 2 reports it.

        v2: the .zarray "order" (for arrays of fewer than two dimensions, where both layouts are
        the same bytes, always "C"). v3: always "C": every read hands out C-ordered results, and a
        "transpose" codec is part of the encoding, listed in :attr:`filters`, as zarr-python 3
        keeps them apart."""
        chain = _CodecChain(self._metadata["codecs"])
        if self.zarr_format == 2 and chain.array_to_array and chain.array_to_array[0]["name"] == "transpose":
            return "F"
        return "C"

    @property
    def filters(self) -> list[dict] | None:
        """The filters, in order, as numcodecs configuration dicts; None when there are none.

        v2: the .zarray "filters". v3: the array->array codecs before the array->bytes one
        ("transpose" included). For a sharded array these are the outer chain's; the shards' own
        codecs are in ``info["codecs"]``."""
        chain = _CodecChain(self._metadata["codecs"])
        if self.zarr_format == 2:
            filters = [c for c in chain.array_to_array if c["name"] != "transpose"] + chain.v2_trailing_filters
        else:
            filters = chain.array_to_array
        return [_numcodecs_config(codec) for codec in filters] or None

    @property
    def compressors(self) -> tuple[dict, ...]:
        """The bytes->bytes codecs after the array->bytes one, in order (zarr-python 3's name):
        v2: the compressor, if any; v3: e.g. ``({"id": "zstd", "level": 0, "checksum": False},)``."""
        chain = _CodecChain(self._metadata["codecs"])
        compressors = chain.v2_compressor if self.zarr_format == 2 else chain.bytes_to_bytes
        return tuple(_numcodecs_config(codec) for codec in compressors)

    @property
    def compressor(self) -> dict | None:
        """The compressor as a numcodecs configuration dict, None when uncompressed.

        v2: the .zarray "compressor" (one caveat: a .zarray whose compressor is numcodecs'
        "shuffle" -- a filter, never a compressor in practice -- reports it under filters).
        v3: the one bytes->bytes codec; an array with several ("zstd" then "crc32c") raises
        TypeError pointing to :attr:`compressors` rather than picking one of them."""
        compressors = self.compressors
        if len(compressors) > 1:
            names = ", ".join(repr(codec["id"]) for codec in compressors)
            raise TypeError(f"{self.path} has {len(compressors)} bytes->bytes codecs ({names}): "
                            f"use Array.compressors")
        return compressors[0] if compressors else None

    # -- pickling and Dask --------------------------------------------------------------------
    #
    # An Array pickles as what it points to (its folder and name) and reopens when unpickled, so
    # it travels to Dask's worker processes in a few bytes; the data stays where it is.

    def __reduce__(self) -> tuple:
        return (_reopen_array, (self.path, self._name, self._storage_options))

    def __dask_tokenize__(self) -> tuple:
        """A token from the path, the metadata and the stored files' sizes and modification times:
        the same while nothing is written, different after any write. No data is read."""
        return ("zarrdirect.Array", self.path, stored_state(self.path))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        return (f"zarrdirect.Array({self.path!r}, shape={self.shape}, dtype={self._dtype}, "
                f"chunks={self.chunks}, zarr_format={self.zarr_format})")

    # -- reading ------------------------------------------------------------------------------

    def read(self, region: Any = None, device: Any = None, out: Any = None, stream: Any = None,
             threads: int | None = None, progress: Any = False, *, return_stats: bool = False) -> Any:
        """Reads `region` (None: everything) and returns it.

        region: an index tuple as for ``arr[...]`` (``(slice(0, 10), 5)``), or a string
            ``"0:10,:,5"`` with the same meaning (integers drop their dimension).
        device: "cpu" (a NumPy array) or "cuda" (the current GPU) / "cuda:N" / N (GPU N) for a
            DeviceArray on that GPU; by default "cpu", or where `out` lives (a `device` that
            names another GPU than out='s is a ValueError). A GPU this machine lacks is a
            ValueError naming it and the count, raised before anything is read.
        out: memory to fill instead of new memory: a NumPy array, or any CUDA array (CuPy,
            PyTorch, ...). It must be writable, of the selection's shape and the array's dtype;
            strides are honoured. `out` itself is returned.
        stream: a CUDA stream (handle, cupy or torch stream) to order the read on. Without one
            the read has finished when this returns; with one, the data is ready for work queued
            on that stream afterwards. For `out=` a CUDA array's own interface stream is used.
        threads: reader threads (default: the library's choice, ZARRDIRECT_THREADS).
        progress: True for a bar on stderr, or a callable(done, total) called about every
            50 ms from this thread; returning False cancels (CancelledError). Ctrl-C always
            cancels a read between chunks and raises KeyboardInterrupt.
        return_stats: return ``(data, stats)``, stats being what the read did (chunks, bytes).
        """
        selection = _selection(region, self.shape)
        data, stats = self._read(selection, device, out, stream, threads, progress)
        return (data, stats) if return_stats else data

    def _read(self, selection: Selection, device: Any, out: Any, stream: Any, threads: Any,
              progress: Any) -> tuple[Any, dict]:
        kind, ordinal = parse_device(device, out)
        handle = parse_stream(stream)
        thread_count = parse_threads(threads)
        callback = progress_callback(progress)
        if selection.axes is not None:  # steps, index lists, masks: the engine's selection read
            if out is None:
                return self._native.read_selection(list(selection.axes), list(selection.shape), kind, ordinal,
                                                   handle, thread_count, callback)
            target = target_of(out, selection, self._dtype, kind)
            stats = self._native.read_selection_into(list(selection.axes), target.pointer, target.byte_strides,
                                                     target.device, ordinal,
                                                     handle if handle is not None else target.stream,
                                                     thread_count, callback)
            return out, stats
        if out is None:
            return self._native.read(selection.region, list(selection.shape), kind, ordinal, handle,
                                     thread_count, callback)
        target = target_of(out, selection, self._dtype, kind)
        stats = self._native.read_into(selection.region, target.pointer, target.byte_strides, target.device,
                                       ordinal, handle if handle is not None else target.stream,
                                       thread_count, callback)
        return out, stats

    # -- many regions, background reads, the chunk cache (_many.py) ---------------------------

    def read_many(self, regions: Any, device: Any = None, *, stack: bool = False, threads: int | None = None,
                  return_stats: bool = False, out: Any = None, stream: Any = None) -> Any:
        """Reads every region of `regions` (a list of index tuples or strings such as
        ``"0:64,0:64,0:64"``) in one batch: each chunk any of them needs is read and decoded
        once. Returns a list of arrays (NumPy, or DeviceArray for device="cuda"), or with
        ``stack=True`` (all regions of one shape) one array with a leading batch axis.

        out: memory to fill instead of new memory, checked as :meth:`read`'s is: with
            ``stack=True`` one array of shape ``(len(regions), *shape)``, else a list of arrays,
            one per region (NumPy, or CUDA arrays: CuPy, PyTorch, ...). `out` is returned. A
            training loop that allocates its batches with its framework (PyTorch's caching
            allocator) saves a device allocation and free per batch, and cudaFree waits for the
            whole GPU.
        stream: with a CUDA `out`, the stream to order the read on (as for :meth:`read`).
        """
        from ._many import read_many

        return read_many(self, regions, device, stack, threads, return_stats, out, stream)

    def read_async(self, region: Any = None, device: Any = None, *, threads: int | None = None) -> "ReadFuture":
        """Starts reading `region` in the background; returns a ReadFuture (``.result(timeout)``,
        ``.done()``, ``.cancel()``)."""
        from ._many import read_many_async

        return read_many_async(self, [region], device, False, threads, single=True)

    def read_many_async(self, regions: Any, device: Any = None, *, stack: bool = False,
                        threads: int | None = None, out: Any = None, stream: Any = None) -> "ReadFuture":
        """:meth:`read_many` in the background: a ReadFuture whose result() is its return value.
        With `out`, the future keeps `out` alive; dropping it before the read has finished
        cancels the read and waits for it to stop writing."""
        from ._many import read_many_async

        return read_many_async(self, regions, device, stack, threads, out=out, stream=stream)

    @property
    def cache_bytes(self) -> int:
        """Capacity of this handle's decoded-chunk cache (0: off, the default). Setting it turns
        the cache on for every read through this object (and its copies made by the engine);
        also ZARRDIRECT_CACHE_MB. Chunks changed on disk or written through the handle are
        never served stale."""
        return int(_native.cache_stats(self._native)["capacity_bytes"])

    @cache_bytes.setter
    def cache_bytes(self, nbytes: int) -> None:
        from ._many import set_cache_bytes

        set_cache_bytes(self, nbytes)

    def cache_stats(self) -> dict:
        """The cache's counters: capacity_bytes, bytes, entries, hits, misses, evictions, invalidations."""
        return dict(_native.cache_stats(self._native))

    @property
    def device_cache_bytes(self) -> int:
        """Capacity of this handle's device cache: decoded chunks kept in GPU memory for reads
        into CUDA memory (``arr.cuda[...]``, ``read_many(..., device="cuda")``, PatchSampler), so
        patches of cached chunks are gathered on the GPU with no host round trip (0: off, the
        default). The same policy as :attr:`cache_bytes` (LRU by bytes, never stale); the two
        work alone or together. Also ZARRDIRECT_DEVICE_CACHE_MB."""
        return int(_native.device_cache_stats(self._native)["capacity_bytes"])

    @device_cache_bytes.setter
    def device_cache_bytes(self, nbytes: int) -> None:
        from ._many import set_device_cache_bytes

        set_device_cache_bytes(self, nbytes)

    def device_cache_stats(self) -> dict:
        """The device cache's counters, as :meth:`cache_stats`."""
        return dict(_native.device_cache_stats(self._native))

    def __getitem__(self, key: Any) -> Any:
        """NumPy-style indexing into host memory: ints, slices (steps too, negative included),
        ``...``, None; and NumPy's advanced indexing: one index array (integer list or array, or
        boolean mask) among them, index arrays on every axis (points, as ``vindex``), one boolean
        mask of the array's shape, or several index arrays among slices (read as the box that
        holds them, refused when that box is far larger than the result; see _fancy). Only the
        chunks holding a selected element are read."""
        plan = plan_index(key, self.shape)
        if plan.points is not None:
            data, _ = self._read_points(plan.points, "cpu")
            return data[()] if plan.points.scalar else data
        if plan.box is not None:  # several index arrays among slices: NumPy indexes the box holding them
            return self.oindex[plan.box.box_key][plan.box.numpy_key]
        data, _ = self._read(plan.selection, "cpu", None, None, None, False)
        if plan.move_to_front is not None:
            return np.moveaxis(data, plan.move_to_front, 0)
        return data[()] if plan.selection.scalar else data

    @property
    def oindex(self) -> "_OrthogonalIndexer":
        """``arr.oindex[[3, 1], :, mask]``: orthogonal indexing as NumPy's ``np.ix_`` and
        zarr-python's ``oindex``: per axis an integer, a slice (with a step), an integer list or
        array (any order, repeats, negative) or a boolean mask of the axis' length. Integers drop
        their axis. ``arr.oindex.cuda[...]`` reads into GPU memory."""
        return _OrthogonalIndexer(self, "cpu")

    @property
    def vindex(self) -> "_VectorizedIndexer":
        """``arr.vindex[[z0, z1], [y0, y1], [x0, x1]]``: coordinate (point) selection as
        zarr-python's ``vindex`` and NumPy's fancy indexing with an array on every axis: integer
        arrays (or integers) per axis, broadcast together; the result has their broadcast shape,
        points in the caller's order (repeats and negative indices allowed). One boolean mask of
        the array's shape selects its True elements. Only the chunks holding a point are read,
        each once. ``arr.vindex.cuda[...]`` reads into GPU memory."""
        return _VectorizedIndexer(self, "cpu")

    def get_coordinate_selection(self, selection: Any) -> Any:
        """zarr-python's name for ``arr.vindex[selection]`` with integer arrays."""
        return self.vindex[selection]

    def get_mask_selection(self, mask: Any) -> Any:
        """zarr-python's name for ``arr.vindex[mask]``, `mask` a boolean array of the array's shape."""
        return self.vindex[mask]

    def _read_points(self, points: Points, device: str) -> tuple[Any, dict]:
        kind, ordinal = parse_device(device, None)
        return self._native.read_points(points.axes, list(points.shape), kind, ordinal, None, parse_threads(None),
                                        progress_callback(False))

    def get_basic_selection(self, selection: Any = Ellipsis, out: Any = None) -> Any:
        """zarr-python's name for ``arr[selection]``."""
        parsed = select(selection, self.shape)
        data, _ = self._read(parsed, "cpu", out, None, None, False)
        return data[()] if parsed.scalar and out is None else data

    def get_orthogonal_selection(self, selection: Any, out: Any = None) -> Any:
        """zarr-python's name for ``arr.oindex[selection]``."""
        parsed = select(selection, self.shape, orthogonal=True)
        data, _ = self._read(parsed, "cpu", out, None, None, False)
        return data[()] if parsed.scalar and out is None else data

    @property
    def cuda(self) -> "_CudaIndexer":
        """``arr.cuda[10:20, :, 5]``: the same indexing, into GPU memory (a DeviceArray)."""
        return _CudaIndexer(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.asarray(arr)`` reads the whole array. Every read is a new array, so NumPy 2's
        ``copy=False`` (never copy) cannot be honoured and raises ValueError, as zarr-python's does."""
        if copy is False:
            raise ValueError("copy=False is not supported: reading a zarrdirect.Array always makes a new array")
        data = self.read()
        return data if dtype is None else data.astype(dtype, copy=False)


# The array->bytes codecs the engine knows: those before are array->array, those after bytes->bytes.
_ARRAY_TO_BYTES = ("bytes", "sharding_indexed")


class _CodecChain:
    """An array's codec chain ("codecs" of the metadata: v3 form, v2 converted to it) split by kind."""

    __slots__ = ("array_to_array", "bytes_to_bytes", "v2_trailing_filters", "v2_compressor")

    def __init__(self, codecs: list[dict]) -> None:
        split = next((i for i, codec in enumerate(codecs) if codec["name"] in _ARRAY_TO_BYTES), len(codecs))
        self.array_to_array = codecs[:split]
        self.bytes_to_bytes = codecs[split + 1:]
        # A v2 chain is [transpose?, filters..., bytes, trailing shuffle filters..., compressor?]
        # (zarrdirect/metadata.hpp): the engine runs shuffles that end the filter list on the
        # stored bytes. What follows "bytes" is the compressor unless it is a shuffle.
        after = self.bytes_to_bytes
        has_compressor = bool(after) and after[-1]["name"] != "numcodecs.shuffle"
        self.v2_compressor = after[-1:] if has_compressor else []
        self.v2_trailing_filters = after[:-1] if has_compressor else after


def _numcodecs_config(codec: dict) -> dict:
    """{"name": "numcodecs.zlib", "configuration": {"level": 1}} -> {"id": "zlib", "level": 1}."""
    name = codec["name"]
    config = {"id": name[len("numcodecs."):] if name.startswith("numcodecs.") else name}
    for key, value in (codec.get("configuration") or {}).items():
        if key != "id":
            config[key] = _json_copy(value)
    return config


def _json_copy(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, scalars) without recursion: attributes may
    nest as deep as the metadata parser allows, past Python's recursion limit (copy.deepcopy)."""
    if not isinstance(value, (dict, list)):
        return value
    root = {} if isinstance(value, dict) else []
    pending = [(value, root)]
    while pending:
        source, target = pending.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, (dict, list)):
                copied = {} if isinstance(item, dict) else []
                pending.append((item, copied))
            else:
                copied = item
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


class _CudaIndexer:
    """The object behind ``arr.cuda``: indexing it reads into device memory."""

    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        self._array = array

    def __reduce__(self) -> tuple:
        return (_CudaIndexer, (self._array,))

    def __getitem__(self, key: Any) -> "_native.DeviceArray":
        plan = plan_index(key, self._array.shape)
        if plan.points is not None:
            data, _ = self._array._read_points(plan.points, "cuda")
            return data
        if plan.box is not None:
            raise InvalidIndexError(
                f"index {key!r}: several index arrays among slices are read into host memory only "
                "(arr[...]); use arr.oindex.cuda[...] (per-axis selection) or arr.vindex.cuda[...] (points)")
        if plan.move_to_front is not None:
            # A DeviceArray is C-contiguous: NumPy's reordering would need a transposing copy.
            raise InvalidIndexError(
                f"index {key!r}: NumPy would move the index array's dimension to the front (integers "
                "and the index array are separated by a slice); use arr.oindex.cuda[...] for the "
                "per-axis order, or put the integers beside the index array")
        data, _ = self._array._read(plan.selection, "cuda", None, None, None, False)
        return data  # a 0-d DeviceArray for a scalar index: GPU libraries have no scalars


def shard_shape(metadata: dict) -> tuple[int, ...] | None:
    """The shard shape from an array's engine metadata (its chunk grid when the chain shards)."""
    sharded = any(codec["name"] == "sharding_indexed" for codec in metadata["codecs"])
    return tuple(metadata["chunks"]) if sharded else None


def inner_chunk_shape(metadata: dict) -> tuple[int, ...]:
    """The chunk shape from an array's engine metadata: the sharding codec's chunk_shape when
    the chain shards (checked by the engine when the metadata was parsed), else the grid's."""
    for codec in metadata["codecs"]:
        if codec["name"] == "sharding_indexed":
            return tuple(int(extent) for extent in codec["configuration"]["chunk_shape"])
    return tuple(metadata["chunks"])


def stored_state(path: str) -> str:
    """A digest of every file under `path` (relative name, size, modification time in ns): what
    changes when anything is written there -- an atomic replace makes a new file, whose mtime is
    new even where its size is not. One listing of the folder; no file is opened."""
    import hashlib

    digest = hashlib.blake2b(digest_size=16)
    pending = [path]
    entries = []
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                        continue
                    try:
                        info = entry.stat()
                    except FileNotFoundError:  # replaced or removed while listing
                        continue
                    entries.append((os.path.relpath(entry.path, path), info.st_size, info.st_mtime_ns))
        except (FileNotFoundError, NotADirectoryError):
            continue
    for name, size, mtime in sorted(entries):
        digest.update(f"{name}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _reopen_array(path: str, name: str | None, storage_options: dict | None = None) -> Array:
    """What an unpickled Array is: the array at `path`, opened again (its current metadata)."""
    array = open(path, storage_options=storage_options)
    array._name = name
    return array


class _OrthogonalIndexer:
    """The object behind ``arr.oindex`` (and ``arr.oindex.cuda``)."""

    __slots__ = ("_array", "_device")

    def __init__(self, array: Array, device: str) -> None:
        self._array = array
        self._device = device

    @property
    def cuda(self) -> "_OrthogonalIndexer":
        return _OrthogonalIndexer(self._array, "cuda")

    def __setitem__(self, key: Any, value: Any) -> None:
        """``arr.oindex[key] = value`` on an array open for writing (zarr-python's
        set_orthogonal_selection)."""
        _setter(self._array, "oindex", self._device)._set_selection(select(key, self._array.shape, orthogonal=True),
                                                                    value)

    def __getitem__(self, key: Any) -> Any:
        selection = select(key, self._array.shape, orthogonal=True)
        data, _ = self._array._read(selection, self._device, None, None, None, False)
        return data[()] if selection.scalar and self._device == "cpu" else data


class _VectorizedIndexer:
    """The object behind ``arr.vindex`` (and ``arr.vindex.cuda``)."""

    __slots__ = ("_array", "_device")

    def __init__(self, array: Array, device: str) -> None:
        self._array = array
        self._device = device

    @property
    def cuda(self) -> "_VectorizedIndexer":
        return _VectorizedIndexer(self._array, "cuda")

    def __setitem__(self, key: Any, value: Any) -> None:
        """``arr.vindex[key] = value`` on an array open for writing (zarr-python's
        set_coordinate_selection and set_mask_selection)."""
        _setter(self._array, "vindex", self._device)._set_points(select_points(key, self._array.shape), value)

    def __getitem__(self, key: Any) -> Any:
        points = select_points(key, self._array.shape)
        data, _ = self._array._read_points(points, self._device)
        return data[()] if points.scalar and self._device == "cpu" else data


def _setter(array: Array, indexer: str, device: str) -> Any:
    """The array, when `arr.<indexer>[...] = value` can write it."""
    if device != "cpu":
        raise InvalidArgumentError(f"arr.{indexer}.cuda reads into GPU memory; assign with arr.{indexer}[...] = value "
                                   "(a CUDA value is written to boxes only: arr[...] = value)")
    if not hasattr(array, "_set_points"):
        raise InvalidArgumentError(f"{array.path} is open read-only: open it with zarrdirect.open(path, mode='r+') "
                                   "to write")
    return array


def _shown(text: str, limit: int = 60) -> str:
    """Untrusted text (names from metadata) for a message: quoted, escaped, one line, shortened."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _listed(items: list[str], limit: int = 8) -> str:
    return ", ".join(items[:limit] + ([f"... ({len(items) - limit} more)"] if len(items) > limit else []))


def _level_summary(image: "_native.Multiscale", index: int) -> str:
    path = _shown(image.levels[index]["path"])
    try:
        metadata = image.level_metadata(index)
    except ZarrdirectError:
        return f"{index}: {path}"
    return f"{index}: {path} {tuple(metadata['shape'])} {np.dtype(metadata['typestr'])}"


def _group_hint(path: str, options: "_native.StoreOptions") -> str | None:
    """Why `path`, a group, cannot be opened as an array, and what to open instead."""
    try:
        group = _native.Group.open(path, options)
    except ZarrdirectError:
        return None
    try:
        image = _native.Multiscale.open(path, options)
    except ZarrdirectError:
        names = [_shown(name) for name, _ in group.members()]
        return (f"{path} is a Zarr group, not an array: open it with zarrdirect.open_group(path) "
                f"(members: {_listed(names) or 'none'})")
    count = len(image.levels)
    levels = [_level_summary(image, index) for index in range(count)]
    # The CLI says the same with --level.
    return (f"{path} is an OME-Zarr multiscale group with {count} levels; choose one with "
            f"open_multiscale(path)[level] or read it with open_multiscale(path).read(level=N) "
            f"(levels: {_listed(levels)})")


def is_url(path: str) -> bool:
    """Whether `path` is a URL ("http://...", "s3://..."): the native store decides what it can read."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme[:1].isalpha() and all(c.isalnum() or c in "+-." for c in scheme)


def _open_url(url: str, storage_options: dict | None) -> Array:
    options = native_store_options(storage_options)
    # No metadata at the URL (HTTP 404) is "no array here", as a missing local folder is.
    try:
        return Array(_native.Array.open(url, options), storage_options=kept(storage_options))
    except InvalidArgumentError as error:
        if "not a Zarr array" in str(error):
            raise NotFoundError.at(url, "Not a Zarr array: no zarr.json (v3) or .zarray (v2) found") from error
        hint = _group_hint(url, options)
        if hint is None:
            raise
        raise InvalidArgumentError(hint) from error


def open(path: str | os.PathLike, *, storage_options: dict | None = None) -> Array:  # noqa: A001 - mirrors zarr.open
    """Opens the Zarr array (v2 or v3) in folder `path`, or at an http(s):// URL.

    storage_options: for URLs, {"headers": {...}, "bearer_token": ..., "concurrency": N,
    "retries": N} (zarrdirect._storage.KEYS); each replaces its ZARRDIRECT_HTTP_* variable.

    A group -- an OME-Zarr image included -- is refused with an error naming what to use
    instead (zarrdirect.open_multiscale, open_group, or a level's own path): picking a level
    silently would hide which resolution was read.
    """
    path = os.fsdecode(path)
    if is_url(path):
        return _open_url(path, storage_options)
    options = native_store_options(storage_options)
    if not os.path.exists(path):
        raise NotFoundError.at(path, "No such file or directory")
    if not any(os.path.exists(os.path.join(path, name)) for name in ("zarr.json", ".zarray", ".zgroup")):
        raise NotFoundError.at(path, "Not a Zarr array: no zarr.json (v3) or .zarray (v2) found")
    try:
        return Array(_native.Array.open(path, options), storage_options=kept(storage_options))
    except (InvalidArgumentError, InvalidMetadataError) as error:
        hint = _group_hint(path, options)
        if hint is None:
            raise
        raise InvalidArgumentError(hint) from error
