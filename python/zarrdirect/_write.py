"""Writing Zarr: zarrdirect.create, zarrdirect.save, ``arr[...] = value`` and write_zarr_from_gpu.

    arr = zarrdirect.create("out.zarr", shape=(512, 512, 512), dtype="uint16", chunks=(128,) * 3)
    arr[0:128] = numpy_block                    # host memory
    arr[128:256] = cupy_block                   # device memory: copied chunk by chunk, no host
                                                # round trip through Python
    zarrdirect.save("copy.zarr", data, codec="blosc:lz4:5:shuffle", zarr_format=2)

Writes run in C++ on a pool of threads with the GIL released; Ctrl-C stops them between chunks
(each chunk is then old or new, never partial). Chunks equal to the fill value are not stored.
"""

from __future__ import annotations

import json
import math
import operator
import os
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from . import _native
from ._array import Array
from ._array import open as _open_array
from ._errors import InvalidArgumentError, InvalidIndexError
from ._options import parse_stream, parse_threads, progress_callback
from ._out import _c_strides, _region_strides
from ._fancy import plan_index
from ._region import Points, Selection, select
from ._scattered_write import numpy_values, write_points, write_selection

if TYPE_CHECKING:
    from ._group import Group

__all__ = ["WritableArray", "create", "open", "save", "create_group", "write_zarr_from_gpu"]


def _fill_value_json(value: Any, dtype: np.dtype) -> Any:
    """The fill value as Zarr metadata writes it (NaN and infinities as strings)."""
    if value is None:
        value = 0
    if dtype.kind in "iu" and not isinstance(value, (bool, np.bool_)) and np.ndim(value) == 0:
        # Out of range is refused, as the metadata reader refuses it (and NumPy 2): NumPy 1.x
        # wrapped it with a warning (2**40 for int32 was stored as 0, -1 for uint8 as 255).
        info = np.iinfo(dtype)
        number = value.item() if isinstance(value, np.generic) else value
        if isinstance(number, (int, float)) and math.isfinite(number) and not info.min <= int(number) <= info.max:
            raise InvalidArgumentError(f"fill_value {value!r} is out of range for {dtype}")
    scalar = np.asarray(value, dtype=dtype)[()]
    if dtype.kind == "b":
        return bool(scalar)
    if dtype.kind in "iu":
        return int(scalar)
    if dtype.kind == "c":
        return [_fill_value_json(scalar.real, np.dtype(f"f{dtype.itemsize // 2}")),
                _fill_value_json(scalar.imag, np.dtype(f"f{dtype.itemsize // 2}"))]
    as_float = float(scalar)
    if math.isnan(as_float):
        return "NaN"
    if math.isinf(as_float):
        return "Infinity" if as_float > 0 else "-Infinity"
    return as_float


def _extents(value: Any, name: str) -> Optional[list[int]]:
    if value is None:
        return None
    if isinstance(value, int):
        value = (value,)
    try:
        extents = [int(e) for e in value]
    except TypeError:
        raise InvalidArgumentError(f"{name} must be a sequence of integers, not {value!r}") from None
    # Said here: past json.dumps a negative extent became 2**64 - 1 ("has extent 18446744073709551615").
    if any(e < 0 for e in extents):
        raise InvalidArgumentError(f"{name} {value!r} has a negative extent")
    return extents


def _filter_config(codec: Any) -> dict:
    """A numcodecs filter as its configuration: a dict as given, or a codec's get_config()."""
    if isinstance(codec, dict):
        return dict(codec)
    get_config = getattr(codec, "get_config", None)
    if get_config is None:
        raise InvalidArgumentError(
            f"a filter must be a numcodecs codec or its configuration (a dict with an 'id'), not {codec!r}")
    return dict(get_config())


class WritableArray(Array):
    """An Array that can also be written: ``arr[selection] = value`` and :meth:`write`.

    Opened with mode "r" (``zarrdirect.open(path)``), writes are refused with an error that
    says to open with mode="r+".
    """

    __slots__ = ("_writable",)

    def __init__(self, native: "_native.Array", writable: bool, storage_options: dict | None = None) -> None:
        super().__init__(native, storage_options=storage_options)
        self._writable = writable

    @property
    def mode(self) -> str:
        return "r+" if self._writable else "r"

    @property
    def read_only(self) -> bool:
        """False when open for writing (mode "r+")."""
        return not self._writable

    def _attribute_saver(self):
        return self._save_attributes if self._writable else None

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes `value` (a NumPy array or scalar, broadcast like NumPy; or a CUDA array of the
        selection's shape and dtype) into ``arr[key]``: a box (ints and step-less slices) is
        written directly; steps, index arrays, masks and points (host values only) by reading,
        changing and writing back the box that holds them (see _scattered_write)."""
        plan = plan_index(key, self.shape)
        if plan.points is not None:
            self._set_points(plan.points, value)
        elif plan.box is not None:
            # Read the box holding every selected element, let NumPy assign into it (its
            # broadcasting, casting and last-wins repeats), write the box back.
            self._check_writable()
            box = self.oindex[plan.box.box_key]
            box[plan.box.numpy_key] = value
            self.oindex[plan.box.box_key] = box
        else:
            self._set_selection(plan.selection, value, plan.move_to_front)

    def _set_selection(self, selection: Selection, value: Any, move_to_front: int | None = None) -> None:
        if selection.axes is None:
            self._write(selection, value, None, None, False, False, False)
            return
        self._check_writable()
        write_selection(self, selection, value, move_to_front)

    def _set_points(self, points: Points, value: Any) -> None:
        self._check_writable()
        write_points(self, points, value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """zarr-python's name for ``arr[selection] = value`` (integers, slices, steps, ``...``)."""
        self._set_selection(select(selection, self.shape), value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """zarr-python's name for ``arr.oindex[selection] = value``."""
        self.oindex[selection] = value

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """zarr-python's name for ``arr.vindex[selection] = value`` with integer arrays."""
        self.vindex[selection] = value

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """zarr-python's name for ``arr.vindex[mask] = value``, `mask` a boolean array of the array's shape."""
        self.vindex[mask] = value

    def resize(self, *shape: Any, durable: bool = False) -> None:
        """Changes the shape in place, as zarr-python's ``resize`` (``arr.resize(20, 30)`` or
        ``arr.resize((20, 30))``): chunks wholly outside the new shape are deleted, and every
        element the new shape adds reads as the fill value (zarr-python would show what edge
        chunks held past the old shape; zarrdirect rewrites those parts with the fill value).
        Only ``shape`` changes in the metadata file, rewritten atomically. Other handles on the
        array keep the old shape until reopened; consolidated metadata is not updated.

        durable: fsync what is written before returning."""
        self._check_writable()
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        try:
            new_shape = [operator.index(extent) for extent in shape]
        except TypeError:
            raise TypeError(f"resize takes integer extents, not {shape!r}") from None
        if len(new_shape) != len(self.shape):
            raise ValueError(f"{self.path}: cannot resize a {len(self.shape)}-d array to {tuple(new_shape)}")
        if any(extent < 0 for extent in new_shape):
            raise ValueError(f"{self.path}: negative extent in {tuple(new_shape)}")
        _native.resize(self._native, new_shape, bool(durable))
        self._metadata = self._native.metadata

    def append(self, data: Any, axis: int = 0, *, durable: bool = False) -> tuple[int, ...]:
        """Grows `axis` by the extent of `data` along it and writes `data` there, as zarr-python's
        ``append``; `data` (NumPy, a scalar-free array-like, or a CUDA array) must match the array
        on every other axis. Returns the new shape."""
        self._check_writable()
        if not hasattr(data, "shape") or (not hasattr(data, "__cuda_array_interface__") and not hasattr(data, "dtype")):
            data = np.asarray(data)
        data_shape = tuple(int(n) for n in data.shape)
        if len(data_shape) != len(self.shape):
            raise ValueError(f"shape of data to append {data_shape} is not compatible with the array's {self.shape}")
        axis = operator.index(axis)
        if not -len(self.shape) <= axis < len(self.shape):
            raise getattr(np, "exceptions", np).AxisError(axis, len(self.shape))  # NumPy 2 moved it
        axis %= len(self.shape)
        if any(data_shape[d] != self.shape[d] for d in range(len(self.shape)) if d != axis):
            raise ValueError(f"shape of data to append {data_shape} is not compatible with the array's {self.shape} "
                             f"along axes other than {axis}")
        old = self.shape
        new_shape = tuple(old[d] + (data_shape[d] if d == axis else 0) for d in range(len(old)))
        self.resize(new_shape, durable=durable)
        region = tuple(slice(old[d], new_shape[d]) if d == axis else slice(None) for d in range(len(old)))
        self._write(select(region, self.shape), data, None, None, durable, False, False)
        return new_shape

    def _check_writable(self) -> None:
        if not self._writable:
            raise InvalidArgumentError(
                f"{self.path} was opened read-only (mode='r'): open it with zarrdirect.open(path, mode='r+') to write")

    def write(self, value: Any, region: Any = None, *, stream: Any = None, threads: int | None = None,
              durable: bool = False, write_empty_chunks: bool = False, progress: Any = False) -> dict:
        """Writes `value` into `region` (None: the whole array; an index tuple or "0:10,:,5").

        stream: for a CUDA value, the stream its producer ran on (default: its
            __cuda_array_interface__ stream, else the legacy default stream); the write waits
            for that stream before copying.
        durable: fsync every file and folder written before returning.
        write_empty_chunks: store chunks that hold only the fill value (default: leave them out
            and remove them where they were stored, as zarr-python does).
        Returns what the write did (chunks written, merged, erased; bytes).
        """
        from ._array import _selection

        return self._write(_selection(region, self.shape), value, stream, threads, durable, write_empty_chunks,
                           progress)

    def _write(self, selection: Selection, value: Any, stream: Any, threads: Any, durable: bool,
               write_empty_chunks: bool, progress: Any) -> dict:
        self._check_writable()
        if selection.axes is not None:
            raise InvalidIndexError("write() takes a box: integers and slices without a step; assign with "
                                    "arr[key] = value, arr.oindex[key] = value or arr.vindex[key] = value for "
                                    "steps, index lists, masks and points")
        interface = getattr(value, "__cuda_array_interface__", None)
        handle = parse_stream(stream)
        if interface is not None:
            pointer, strides, source_stream, keep = self._device_source(selection, value, interface)
            device = "cuda"
            if handle is None:
                handle = source_stream
        else:
            host = numpy_values(value, self.dtype)  # NumPy's assignment casting
            try:
                host = np.broadcast_to(host, selection.shape)
            except ValueError:
                raise InvalidArgumentError(
                    f"a value of shape {np.shape(value)} cannot be written to a selection of shape "
                    f"{selection.shape}") from None
            pointer = host.__array_interface__["data"][0]
            strides = _region_strides(tuple(host.strides), selection)
            device, keep = "cpu", host
        stats = _native.write(self._native, selection.region, int(pointer), strides, device, handle,
                              parse_threads(threads), bool(durable), bool(write_empty_chunks),
                              progress_callback(progress))
        del keep
        return stats

    def _device_source(self, selection: Selection, value: Any, interface: dict) -> tuple[int, list[int], Any, Any]:
        if interface.get("mask") is not None:
            raise InvalidArgumentError("the value is a masked CUDA array; zarrdirect writes plain arrays")
        shape = tuple(int(e) for e in interface["shape"])
        dtype = np.dtype(interface["typestr"])
        if dtype != self.dtype:
            raise InvalidArgumentError(
                f"the CUDA value has dtype {dtype}, the array has {self.dtype}: convert it on the GPU first "
                f"(zarrdirect does not cast device data)")
        strides = interface.get("strides")
        strides = _c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
        if shape != selection.shape:
            raise InvalidArgumentError(
                f"the CUDA value has shape {shape}, the selection has shape {selection.shape} (device values are "
                f"not broadcast)")
        pointer = int(interface["data"][0] or 0)
        stream = interface.get("stream")
        return pointer, _region_strides(strides, selection), (int(stream) if stream else None), value

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", mode={self.mode!r})"

    def __reduce__(self) -> tuple:
        # Reopened in the same mode where unpickled: a Dask task writing a block gets an array
        # it can write to (see Array.__reduce__).
        return (_reopen_writable, (self.path, self._writable, self._storage_options))


def _reopen_writable(path: str, writable: bool, storage_options: dict | None = None) -> WritableArray:
    return open(path, "r+" if writable else "r", storage_options=storage_options)


_MODES = ("r", "r+", "a", "w", "w-", "x")


def open(path: str | os.PathLike, mode: str = "r", *, cache_bytes: int | None = None,  # noqa: A001
         storage_options: dict | None = None, device_cache_bytes: int | None = None,
         **create_options: Any) -> WritableArray:
    """Opens the Zarr array in folder `path` (or at an http(s):// URL, read only), with
    zarr-python's modes: "r" read only (the default), "r+" read and write an existing array,
    "a" read and write, creating the array when there is none, "w" create, replacing whatever is
    at `path`, "w-" (or "x") create, failing if something is there. Creating takes
    :func:`create`'s keywords (shape, dtype, chunks, shards, codec, zarr_format, fill_value, ...).
    Groups are refused with a hint, as for reading.
    `cache_bytes`: turn on the handle's decoded-chunk cache with this capacity
    (Array.cache_bytes); `device_cache_bytes`: the same in GPU memory for reads into CUDA memory
    (Array.device_cache_bytes). `storage_options`: for URLs, headers, bearer token, concurrency and
    retries (see zarrdirect._storage.KEYS)."""
    if mode not in _MODES:
        raise InvalidArgumentError(f"mode must be one of {', '.join(repr(m) for m in _MODES)}, not {mode!r}")
    if mode not in ("r", "r+") and "://" in os.fsdecode(path):
        raise InvalidArgumentError(f"mode {mode!r} writes, and {os.fsdecode(path)} is a URL: URLs are read only (mode 'r')")
    creates = mode in ("w", "w-", "x") or (mode == "a" and not _holds_node(path))
    if create_options and mode in ("r", "r+"):
        raise InvalidArgumentError(f"mode {mode!r} opens an existing array: {', '.join(sorted(create_options))} "
                                   "can only be given with mode 'w', 'w-' or 'a' (or to zarrdirect.create)")
    if creates:
        if "overwrite" in create_options:
            raise InvalidArgumentError("open() takes no overwrite=: mode 'w' replaces, mode 'w-' refuses")
        missing = [name for name in ("shape", "dtype") if name not in create_options]
        if missing:
            raise InvalidArgumentError(f"mode {mode!r} creates an array at {os.fsdecode(path)}: give "
                                       f"{' and '.join(missing)} (and chunks, codec, ... as for zarrdirect.create)")
        array = create(path, overwrite=mode == "w", **create_options)
        mode = "r+"
    else:
        array = _open_array(path, storage_options=storage_options)
        if mode == "a":
            mode = "r+"
    opened = WritableArray(array._native, mode == "r+", array._storage_options)
    if cache_bytes is not None:
        opened.cache_bytes = cache_bytes
    if device_cache_bytes is not None:
        opened.device_cache_bytes = device_cache_bytes
    return opened


def _holds_node(path: str | os.PathLike) -> bool:
    """An array or group (v2 or v3 metadata) is at local folder `path`."""
    folder = os.fsdecode(path)
    return any(os.path.exists(os.path.join(folder, name)) for name in ("zarr.json", ".zarray", ".zgroup"))


def create(path: str | os.PathLike, *, shape: Sequence[int] | int, dtype: Any, chunks: Sequence[int] | int | None = None,
           shards: Sequence[int] | int | None = None, codec: Any = "zstd:3", zarr_format: int = 3,
           fill_value: Any = 0, attributes: dict | None = None, dimension_names: Sequence[str | None] | None = None,
           overwrite: bool = False, level: int | None = None, order: str = "C",
           filters: Sequence[Any] | None = None) -> WritableArray:
    """Creates a Zarr array in folder `path` and returns it open for writing (mode "r+").

    shape, dtype: any numeric NumPy dtype (stored little-endian).
    chunks: the chunk shape (default: one chunk); with `shards`, the inner chunks of each shard.
    shards: the shard shape (zarr_format 3 only), a multiple of `chunks`.
    codec: "raw", "zstd:3", "blosc:lz4:5:shuffle", "gzip:6", "zlib:1", "bz2:9", "lzma:6", "lz4", with
        "+crc32c" for a checksum (v3); or, for v3, a codec list as in zarr.json.
    level: replaces the codec's level.
    order: "C" or "F", the order of elements inside each stored chunk (v2 "order"; v3 a transpose
        codec reversing the axes). Reading and writing look the same either way.
    filters: v2 filters, as numcodecs configurations ({"id": "delta", "dtype": "<u2"}) or
        numcodecs codec objects: delta, fixedscaleoffset, astype, quantize, bitround, shuffle.
    overwrite: replace an array or group already at `path` (its metadata and all chunks are
        removed first). Without it, an existing node is an error and nothing is touched.
    """
    dtype = np.dtype(dtype)
    shape_list = _extents(shape, "shape")
    if dtype.kind not in "biufc":
        raise InvalidArgumentError(f"dtype {dtype} is not numeric: zarrdirect writes numeric arrays")
    options = {
        "shape": shape_list,
        "typestr": dtype.newbyteorder("<").str if dtype.itemsize > 1 else dtype.str,
        "chunks": _extents(chunks, "chunks"),
        "shards": _extents(shards, "shards"),
        "codec": codec if isinstance(codec, str) else list(codec),
        "level": level,
        "zarr_format": int(zarr_format),
        "fill_value": _fill_value_json(fill_value, dtype),
        "attributes": attributes if attributes is not None else {},
        "dimension_names": None if dimension_names is None else list(dimension_names),
        "order": order,
        "filters": None if filters is None else [_filter_config(f) for f in filters],
    }
    native = _native.create_array(os.fsdecode(path), json.dumps(options), bool(overwrite))
    return WritableArray(native, True)


def create_group(path: str | os.PathLike, *, zarr_format: int = 3, attributes: dict | None = None,
                 overwrite: bool = False) -> "Group":
    """Creates a Zarr group (v3 zarr.json, or v2 .zgroup and .zattrs) in folder `path` and
    returns it open, as zarr-python's ``create_group`` / ``open_group(mode="w")`` do."""
    from ._group import open_group  # _group builds on the arrays this module writes
    _native.create_group(os.fsdecode(path), int(zarr_format), json.dumps(attributes or {}), bool(overwrite))
    return open_group(path)


def load(path: str | os.PathLike, *, storage_options: dict | None = None) -> np.ndarray:
    """The whole array at `path` (a folder or an http(s):// URL) as a NumPy array, as
    zarr-python's ``load`` reads an array (a group is refused, naming open_group)."""
    return open(path, storage_options=storage_options)[...]


def open_array(path: str | os.PathLike, mode: str = "r", **options: Any) -> WritableArray:
    """zarr-python's name for :func:`open` of an array (the same modes and keywords)."""
    return open(path, mode, **options)


def save(path: str | os.PathLike, data: Any, **create_options: Any) -> WritableArray:
    """Creates an array of `data`'s shape and dtype at `path` (options as for :func:`create`;
    chunks default to the whole array) and writes `data` (NumPy, or a CUDA array) into it."""
    interface = getattr(data, "__cuda_array_interface__", None)
    if interface is not None:
        shape = tuple(int(e) for e in interface["shape"])
        dtype = np.dtype(interface["typestr"])
    else:
        data = np.asarray(data)
        shape, dtype = data.shape, data.dtype
    array = create(path, shape=shape, dtype=create_options.pop("dtype", dtype), **create_options)
    array.write(data)
    return array


def write_zarr_from_gpu(array: Any, path: str | os.PathLike, chunks: Sequence[int] | int | None = None,
                        codec: Any = "zstd:3", **create_options: Any) -> WritableArray:
    """The write counterpart of read_zarr_to_gpu: saves a GPU array (CuPy, PyTorch CUDA tensor,
    anything with __cuda_array_interface__) as a new Zarr array at `path`. The data goes from the
    GPU to the chunk encoders without a host copy of the whole array."""
    if getattr(array, "__cuda_array_interface__", None) is None:
        raise InvalidArgumentError(
            f"write_zarr_from_gpu takes a CUDA array (CuPy, PyTorch, ...), not {type(array).__name__}; "
            f"use zarrdirect.save for host arrays")
    return save(path, array, chunks=chunks, codec=codec, **create_options)
