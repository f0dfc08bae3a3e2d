"""An xarray backend: ``xarray.open_dataset(path, engine="zarrdirect")``.

    ds = xarray.open_dataset("volume.zarr", engine="zarrdirect")             # lazy
    da = xarray.open_dataarray("cells.ome.zarr", engine="zarrdirect", level=1, chunks={})

Opens one Zarr array -- a folder holding an array, or one level of an OME-Zarr multiscale image
(``level=``, default 0) -- as a Dataset of one variable, read lazily: only what is indexed is
read, by zarrdirect. Dimension names come from the v3 ``dimension_names`` or the OME axes (else
dim_0, dim_1, ...); an OME level gets coordinates ``translation + scale * index`` along its
non-channel axes (their "units" in the coordinate's attrs). ``chunks=`` gives Dask arrays whose
blocks zarrdirect reads; ``chunks={}`` uses the stored files' shape (shards, or chunks).

Registered as the "zarrdirect" engine (entry point group "xarray.backends") when zarrdirect is
installed; ``engine=zarrdirect.xarray.ZarrdirectBackendEntrypoint`` works without installation.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

import numpy as np
import xarray
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ._array import Array
from ._array import open as open_array
from ._errors import InvalidArgumentError
from ._group import Multiscale, open_multiscale

__all__ = ["ZarrdirectBackendArray", "ZarrdirectBackendEntrypoint"]


def _read_basic(array: Array, key: tuple) -> np.ndarray:
    """`key` (ints and slices of positive step, as xarray's BASIC indexing hands them out) read
    by zarrdirect: the box the slices span, then their steps taken from it in memory."""
    box, steps, stepped = [], [], False
    for item in key:
        if isinstance(item, slice):
            start, stop, step = item.indices(array.shape[len(box)])
            stop = max(start, stop if step == 1 else start + ((stop - start - 1) // step) * step + 1)
            box.append(slice(start, stop))
            steps.append(slice(None, None, step))
            stepped = stepped or step != 1
        else:
            box.append(int(item))
    data = array.read(tuple(box))
    return data[tuple(steps)] if stepped else data


class ZarrdirectBackendArray(BackendArray):
    """The lazy array behind a variable: indexing it reads that region with zarrdirect. Pickles
    as its zarrdirect Array does (the path), so Dask's process and distributed workers reopen it."""

    def __init__(self, array: Array) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._raw_getitem)

    def _raw_getitem(self, key: tuple) -> np.ndarray:
        return _read_basic(self.array, key)


def _default_name(path: str, image: Multiscale | None) -> str:
    if image is not None and image.name:
        return image.name
    base = os.path.basename(os.path.normpath(path))
    for suffix in (".ome.zarr", ".zarr"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base or "data"


def _dimension_names(array: Array, image: Multiscale | None) -> list[str]:
    names: list[Any] = [None] * array.ndim
    if image is not None and image.axes and len(image.axes) == array.ndim:
        names = [axis.get("name") for axis in image.axes]
    elif array.dimension_names is not None and len(array.dimension_names) == array.ndim:
        names = list(array.dimension_names)
    dims = [name if isinstance(name, str) and name else f"dim_{i}" for i, name in enumerate(names)]
    if len(set(dims)) != len(dims):  # duplicate names from metadata: xarray needs distinct ones
        dims = [f"dim_{i}" for i in range(array.ndim)]
    return dims


def _ome_coordinates(image: Multiscale, level: int, dims: list[str], shape: tuple[int, ...]) -> dict:
    """Coordinates of an OME level's non-channel axes: translation + scale * index."""
    info = image.levels[level]
    scale, translation = info["scale"], info["translation"]
    if scale is None and translation is None:
        return {}
    scale = scale or [1.0] * len(shape)
    translation = translation or [0.0] * len(shape)
    coords = {}
    for axis, (dim, extent) in enumerate(zip(dims, shape)):
        meta = image.axes[axis] if image.axes and axis < len(image.axes) else {}
        if meta.get("type") == "channel":
            continue
        values = float(translation[axis]) + float(scale[axis]) * np.arange(extent, dtype=np.float64)
        attrs = {"units": meta["unit"]} if meta.get("unit") else {}
        coords[dim] = xarray.Variable((dim,), values, attrs)
    return coords


def open_zarrdirect_dataset(path: str | os.PathLike, level: int | None = None, name: str | None = None,
                            drop_variables: Iterable[str] | str | None = None) -> xarray.Dataset:
    """The Dataset the backend returns (see the module's doc)."""
    path = os.fspath(path)
    image = None
    if level is not None or _is_group(path):
        image = open_multiscale(path)
        level = 0 if level is None else level
        array = image.level(level)
        level = image._index(level)
    else:
        array = open_array(path)
    dims = _dimension_names(array, image)
    name = name or _default_name(path, image)
    if name in dims:
        name = "data"
    storage = array.shards or array.chunks
    encoding = {
        "chunks": array.chunks,
        "shards": array.shards,
        "preferred_chunks": dict(zip(dims, storage)),
        "source": path,
        "dtype": array.dtype,
        "fill_value": array.fill_value,
    }
    data = indexing.LazilyIndexedArray(ZarrdirectBackendArray(array))
    variables = {name: xarray.Variable(dims, data, dict(array.attrs), encoding)}
    coords = _ome_coordinates(image, level, dims, array.shape) if image is not None else {}
    dataset = xarray.Dataset(variables, coords=coords, attrs=dict(image.attrs) if image is not None else {})
    if drop_variables:
        drop = [drop_variables] if isinstance(drop_variables, str) else list(drop_variables)
        dataset = dataset.drop_vars([v for v in drop if v in dataset.variables])
    dataset.encoding["source"] = path
    return dataset


def _is_group(path: str) -> bool:
    """True for a Zarr group's folder (v2 .zgroup without .zarray, or a v3 group's zarr.json)."""
    if os.path.exists(os.path.join(path, ".zarray")):
        return False
    return os.path.exists(os.path.join(path, ".zgroup")) or _is_v3_group(path)


def _is_v3_group(path: str) -> bool:
    import json

    try:
        with open(os.path.join(path, "zarr.json"), "rb") as document:
            return json.load(document).get("node_type") == "group"
    except (OSError, ValueError, AttributeError):
        return False


class ZarrdirectBackendEntrypoint(BackendEntrypoint):
    """xarray's "zarrdirect" engine: one Zarr array or OME-Zarr level, read lazily by zarrdirect.

    Options: level (the OME-Zarr level, default 0 for an image), name (the variable's name,
    default the image's name or the folder's without ".zarr")."""

    description = "Open a Zarr array or an OME-Zarr level with zarrdirect (lazy, Dask-ready)"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "level", "name")

    def open_dataset(self, filename_or_obj: Any, *, drop_variables: Any = None, level: int | None = None,
                     name: str | None = None) -> xarray.Dataset:
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            raise InvalidArgumentError(
                f"the zarrdirect engine opens a folder path, not {type(filename_or_obj).__name__}")
        return open_zarrdirect_dataset(filename_or_obj, level=level, name=name, drop_variables=drop_variables)

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            return False
        path = os.fspath(filename_or_obj)
        return os.path.isdir(path) and any(
            os.path.exists(os.path.join(path, n)) for n in ("zarr.json", ".zarray", ".zgroup"))
