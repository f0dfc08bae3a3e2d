"""zarrdirect.write_multiscale: an OME-Zarr pyramid (NGFF 0.4 on Zarr v2, or 0.5 on Zarr v3)
from a volume in host or GPU memory, or from an array on storage.

    zarrdirect.write_multiscale("out.ome.zarr", volume, levels=4, downsample="zyx",
                                units="micrometer", scale=(2.0, 0.5, 0.5))

Device data (CuPy, PyTorch CUDA tensors, anything with __cuda_array_interface__ or a CUDA
DLPack capsule) is downsampled on the GPU level by level in device memory; host data (NumPy,
CPU tensors, CPU DLPack) on the CPU with threads; a zarrdirect.Array (or a path) is read slab by
slab, so memory stays bounded whatever its size. Each level is the one above downsampled over
2x2 (yx) or 2x2x2 (zyx) blocks: mean (integers rounded half to even, computed without
overflow), nearest (each block's last pixel, a[1::2, 1::2],
as ome-zarr-py's nearest samples) or max. Halved axes get shape // 2 as in
ome-zarr-py; an odd last row, column or plane is left out of the level below.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence

import numpy as np

from . import _native
from ._array import Array
from ._array import open as _open_array
from ._errors import InvalidArgumentError
from ._options import parse_stream, parse_threads, progress_callback

__all__ = ["write_multiscale"]


def _names(axes: Any) -> Optional[list[str]]:
    if axes is None:
        return None
    if isinstance(axes, str):
        return list(axes)
    names = []
    for axis in axes:
        names.append(axis["name"] if isinstance(axis, dict) else str(axis))
    return names


def _units(units: Any, axes: Optional[list[str]], ndim: int, downsample: str) -> Optional[list[str]]:
    """None; one unit for every space axis (a string); a dict axis -> unit; or one per axis."""
    if units is None:
        return None
    names = axes if axes is not None else list("tczyx"[5 - ndim:]) if 2 <= ndim <= 5 else None
    if isinstance(units, str):
        if names is None:
            raise InvalidArgumentError("units: give axes= to say which axes a single unit is for")
        return [units if name in ("x", "y", "z") else "" for name in names]
    if isinstance(units, dict):
        if names is None:
            raise InvalidArgumentError("units: give axes= to name the axes the units are for")
        unknown = set(units) - set(names)
        if unknown:
            raise InvalidArgumentError(f"units: no axis named {sorted(unknown)!r} (axes are {names!r})")
        return [str(units.get(name) or "") for name in names]
    return ["" if u is None else str(u) for u in units]


def _floats(values: Any, name: str) -> Optional[list[float]]:
    if values is None:
        return None
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name} must be a sequence of numbers, not {values!r}") from None


def _ints(values: Any, name: str) -> Optional[list[int]]:
    if values is None:
        return None
    if isinstance(values, int):
        values = (values,)
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name} must be a sequence of integers, not {values!r}") from None


def _cuda_view(data: Any) -> Any:
    """An object with __cuda_array_interface__ for CUDA data, None for host data."""
    if getattr(data, "__cuda_array_interface__", None) is not None:
        return data
    device = getattr(data, "__dlpack_device__", None)
    if device is not None and int(device()[0]) == 2:
        try:
            import cupy  # noqa: PLC0415 - only for CUDA DLPack producers
        except ImportError:
            raise InvalidArgumentError(
                "this CUDA DLPack array has no __cuda_array_interface__; importing it needs CuPy") from None
        return cupy.from_dlpack(data)
    return None


def write_multiscale(path: str | os.PathLike, data: Any, *, levels: int = 4, method: str = "mean",
                     downsample: str = "yx", ngff: str = "0.4", axes: Any = None, units: Any = None,
                     scale: Sequence[float] | None = None, translation: Sequence[float] | None = None,
                     chunks: Sequence[int] | int | None = None, shards: Sequence[int] | int | None = None,
                     codec: Any = "zstd:3", level: int | None = None, name: str | None = None,
                     overwrite: bool = False, slab_bytes: int | None = None, device: str | None = None,
                     stream: Any = None, threads: int | None = None, durable: bool = False,
                     progress: Any = False) -> dict:
    """Writes `data` and levels-1 downsampled levels as an OME-Zarr image at `path`.

    data: NumPy array, CuPy array, PyTorch tensor, DLPack object, or a zarrdirect.Array / path
        of an array on storage (read slab by slab; `device="cuda"` downsamples those on the GPU).
    levels: levels written, level 0 (the data) included.
    method: "mean", "nearest" or "max".
    downsample: "yx" (the last two axes) or "zyx" (the last three).
    ngff: "0.4" (Zarr v2 arrays, "/" chunk keys) or "0.5" (Zarr v3, dimension_names).
    axes: names, e.g. "czyx" or ["c", "z", "y", "x"] (default by rank: yx, zyx, czyx, tczyx).
    units: one unit for the space axes ("micrometer"), a dict axis -> unit, or one per axis.
    scale, translation: level 0's pixel size and origin per axis; deeper levels scale by 2 on
        halved axes and shift by half a pixel of the level above (mean, max) or a whole
        one (nearest), keeping pixel centres aligned.
    chunks, shards (0.5 only), codec, level: storage of every level (chunks clamped to each
        level's shape).
    slab_bytes: for arrays on storage, the most bytes read at once (default 512 MiB).
    Returns what was written: levels (path, shape, scale, translation), bytes, slabs.
    """
    source_array = None
    if isinstance(data, (str, os.PathLike)):
        source_array = _open_array(data)
    elif isinstance(data, Array):
        source_array = data
    ndim = len(source_array.shape) if source_array is not None else None
    cuda = None
    if source_array is None:
        cuda = _cuda_view(data)
        if cuda is None:
            data = np.ascontiguousarray(np.asarray(data) if not hasattr(data, "__dlpack__") or
                                        isinstance(data, np.ndarray) else np.from_dlpack(data))
            ndim = data.ndim
        else:
            ndim = len(cuda.__cuda_array_interface__["shape"])
    names = _names(axes)
    options = {
        "levels": int(levels),
        "method": str(method),
        "downsample": str(downsample),
        "ngff": str(ngff),
        "axes": names,
        "units": _units(units, names, ndim, downsample),
        "scale": _floats(scale, "scale"),
        "translation": _floats(translation, "translation"),
        "chunks": _ints(chunks, "chunks"),
        "shards": _ints(shards, "shards"),
        "codec": codec if isinstance(codec, str) else list(codec),
        "level": level,
        "name": name or "",
        "overwrite": bool(overwrite),
        "slab_bytes": int(slab_bytes or 0),
        "durable": bool(durable),
    }
    options_json = json.dumps(options)
    callback = progress_callback(progress)
    if source_array is not None:
        if device not in (None, "cpu", "cuda"):
            raise InvalidArgumentError(f"device must be 'cpu' or 'cuda', not {device!r}")
        return _native.write_multiscale_from_array(os.fsdecode(path), options_json, source_array._native,
                                                   device or "cpu", parse_threads(threads), callback)
    if cuda is not None:
        interface = cuda.__cuda_array_interface__
        shape = [int(e) for e in interface["shape"]]
        dtype = np.dtype(interface["typestr"])
        strides = interface.get("strides")
        if strides is not None:
            expected, step = [], dtype.itemsize
            for extent in reversed(shape):
                expected.insert(0, step)
                step *= extent
            if any(int(s) != e for s, e, n in zip(strides, expected, shape) if n > 1):
                raise InvalidArgumentError(
                    "write_multiscale takes C-contiguous device data (cupy.ascontiguousarray / tensor.contiguous())")
        handle = parse_stream(stream)
        if handle is None and interface.get("stream"):
            handle = int(interface["stream"])
        return _native.write_multiscale(os.fsdecode(path), options_json, int(interface["data"][0] or 0), shape,
                                        _typestr(dtype), "cuda", handle, parse_threads(threads), callback)
    if data.dtype.kind not in "biufc":
        raise InvalidArgumentError(f"dtype {data.dtype} is not numeric: zarrdirect writes numeric arrays")
    if not data.dtype.isnative:
        data = data.astype(data.dtype.newbyteorder("="))
    return _native.write_multiscale(os.fsdecode(path), options_json, data.__array_interface__["data"][0],
                                    list(data.shape), _typestr(data.dtype), "cpu", None, parse_threads(threads),
                                    callback)


def _typestr(dtype: np.dtype) -> str:
    return dtype.newbyteorder("<").str if dtype.itemsize > 1 else dtype.str
