"""An xarray backend: ``xarray.open_dataset(path, engine="zarrdirect")``.

    ds = xarray.open_dataset("volume.zarr", engine="zarrdirect")             # lazy
    da = xarray.open_dataarray("cells.ome.zarr", engine="zarrdirect", level=1, chunks={})

Opens, read lazily (only what is indexed is read, by zarrdirect):

* a group written as xarray writes Zarr (``Dataset.to_zarr``: one array per variable, dimension
  names in each array's ``_ARRAY_DIMENSIONS`` attribute or v3 ``dimension_names``), as the Dataset
  it holds, decoded by xarray's CF conventions as the "zarr" engine decodes it (``_FillValue``
  from a v2 array's fill_value, ``scale_factor``, times; the usual ``mask_and_scale=``,
  ``decode_times=``, ... options); variables of dtypes zarrdirect does not read (the "<U" and
  "|S" arrays of string coordinates) are read through zarr-python 2 where it is installed;
* one Zarr array, as a Dataset of one variable;
* one level of an OME-Zarr multiscale image (``level=``, default 0), with coordinates
  ``translation + scale * index`` along its non-channel axes (their "units" in the coordinate's
  attrs).

A lone array's dimension names come from the v3 ``dimension_names``, ``_ARRAY_DIMENSIONS`` or the
OME axes (else dim_0, dim_1, ...). ``chunks=`` gives Dask arrays whose blocks zarrdirect reads;
``chunks={}`` uses the stored files' shape (shards, or chunks).

Registered as the "zarrdirect" engine (entry point group "xarray.backends") when zarrdirect is
installed; ``engine=zarrdirect.xarray.ZarrdirectBackendEntrypoint`` works without installation.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

import numpy as np
import xarray
from xarray import conventions
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ._array import Array
from ._array import open as open_array
from ._errors import InvalidArgumentError, UnsupportedError
from ._group import Multiscale, open_group, open_multiscale

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


def _stored_dimension_names(array: Array) -> list[Any] | None:
    """The names xarray stores: a v3 array's dimension_names, else the ``_ARRAY_DIMENSIONS``
    attribute (zarr v2, and v3 arrays written by older xarray)."""
    if array.dimension_names is not None and len(array.dimension_names) == array.ndim:
        return list(array.dimension_names)
    listed = array.attrs.get("_ARRAY_DIMENSIONS")
    if isinstance(listed, list) and len(listed) == array.ndim:
        return listed
    return None


def _dimension_names(array: Array, image: Multiscale | None) -> list[str]:
    names: list[Any] = [None] * array.ndim
    if image is not None and image.axes and len(image.axes) == array.ndim:
        names = [axis.get("name") for axis in image.axes]
    elif _stored_dimension_names(array) is not None:
        names = _stored_dimension_names(array)
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


# xarray's CF decoding options, passed through to xarray.conventions for a group's variables.
_DECODERS = ("mask_and_scale", "decode_times", "concat_characters", "decode_coords", "use_cftime",
             "decode_timedelta")


def _variable_of(name: str, array: Array) -> xarray.Variable:
    """One variable of an xarray-written group, undecoded, as xarray's zarr backend presents it."""
    dims = _stored_dimension_names(array)
    if dims is None or not all(isinstance(dim, str) and dim for dim in dims):
        raise InvalidArgumentError(
            f"{array.path}: variable {name!r} has no dimension names (a v3 'dimension_names' or the "
            "'_ARRAY_DIMENSIONS' attribute xarray writes); open the array itself to get dim_0, dim_1, ...")
    attrs = {key: value for key, value in array.attrs.items() if key != "_ARRAY_DIMENSIONS"}
    # What the "zarr" engine does: a v2 fill_value is the variable's _FillValue for CF decoding
    # (v3 arrays written by xarray carry _FillValue in their attributes).
    if array.zarr_format == 2 and array._metadata["fill_value"] is not None and "_FillValue" not in attrs:
        attrs["_FillValue"] = array.fill_value
    encoding = {"chunks": array.chunks, "shards": array.shards,
                "preferred_chunks": dict(zip(dims, array.shards or array.chunks)), "dtype": array.dtype}
    return xarray.Variable(dims, indexing.LazilyIndexedArray(ZarrdirectBackendArray(array)), attrs, encoding)


class _ZarrPythonBackendArray(BackendArray):
    """A variable zarrdirect does not read (fixed-length strings, objects: xarray writes string
    coordinates, such as channel names, as "<U" arrays), read lazily through zarr-python."""

    def __init__(self, array: Any) -> None:
        self._array = array
        self.shape = tuple(array.shape)
        self.dtype = np.dtype(array.dtype)

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC,
                                                  lambda k: np.asarray(self._array[k]))


def _zarr_python_variable(path: str, name: str, refused: UnsupportedError) -> xarray.Variable:
    """The variable `name` of the group at `path` through zarr-python 2, where zarrdirect refused
    its dtype; `refused` is raised again, with the reason, where zarr-python cannot help."""
    try:
        import zarr
    except ImportError:
        raise UnsupportedError(f"{refused} (zarr-python, which would read this variable, is not installed)") from None
    try:
        array = zarr.open_array(os.path.join(path, name), mode="r")
    except Exception as error:  # a v3 array (zarr 2 reads v2 only), or one zarr-python refuses too
        raise UnsupportedError(f"{refused} (zarr-python could not open it either: {error})") from None
    dims = array.attrs.get("_ARRAY_DIMENSIONS")
    if not isinstance(dims, list) or len(dims) != array.ndim or not all(isinstance(d, str) and d for d in dims):
        raise InvalidArgumentError(f"{path}: variable {name!r} has no dimension names (the '_ARRAY_DIMENSIONS' "
                                   "attribute xarray writes)")
    attrs = {key: value for key, value in array.attrs.items() if key != "_ARRAY_DIMENSIONS"}
    if array.fill_value is not None and "_FillValue" not in attrs and array.dtype.kind not in "USO":
        attrs["_FillValue"] = array.fill_value
    encoding = {"chunks": array.chunks, "preferred_chunks": dict(zip(dims, array.chunks)), "dtype": array.dtype}
    return xarray.Variable(dims, indexing.LazilyIndexedArray(_ZarrPythonBackendArray(array)), attrs, encoding)


def _open_group_dataset(path: str, drop_variables: Any, decoders: dict) -> xarray.Dataset:
    """An xarray-written group (Dataset.to_zarr) as its Dataset, decoded as the zarr engine does.
    Variables of dtypes zarrdirect does not read (strings) come through zarr-python."""
    group = open_group(path)
    variables = {}
    for name in group.array_keys():
        if isinstance(drop_variables, str) and name == drop_variables:
            continue
        if drop_variables is not None and not isinstance(drop_variables, str) and name in drop_variables:
            continue
        try:
            array = group[name]
        except UnsupportedError as refused:
            variables[name] = _zarr_python_variable(path, name, refused)
            continue
        variables[name] = _variable_of(name, array)
    if not variables:
        raise InvalidArgumentError(f"{path}: the group holds no arrays (and no OME-Zarr multiscales) to open")
    attrs = dict(group.attrs)
    variables, attrs, coord_names = conventions.decode_cf_variables(variables, attrs, **decoders)
    dataset = xarray.Dataset(variables, attrs=attrs).set_coords([c for c in coord_names if c in variables])
    dataset.encoding["source"] = path
    return dataset


def open_zarrdirect_dataset(path: str | os.PathLike, level: int | None = None, name: str | None = None,
                            drop_variables: Iterable[str] | str | None = None, **decoders: Any) -> xarray.Dataset:
    """The Dataset the backend returns (see the module's doc). `decoders`: xarray's CF decoding
    options (mask_and_scale, decode_times, ...) for an xarray-written group."""
    path = os.fsdecode(path)
    image = None
    if level is None and _is_group(path) and not _is_image(path):
        given = {key: value for key, value in decoders.items() if key in _DECODERS and value is not None}
        return _open_group_dataset(path, drop_variables, given)
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


def _is_image(path: str) -> bool:
    """A group whose attributes describe an OME-Zarr image (0.4 "multiscales" or 0.5 "ome")."""
    attrs = open_group(path).attrs
    return "multiscales" in attrs or isinstance(attrs.get("ome"), dict)


def _is_v3_group(path: str) -> bool:
    import json

    try:
        with open(os.path.join(path, "zarr.json"), "rb") as document:
            return json.load(document).get("node_type") == "group"
    except (OSError, ValueError, AttributeError):
        return False


class ZarrdirectBackendEntrypoint(BackendEntrypoint):
    """xarray's "zarrdirect" engine: an xarray-written group, one Zarr array or an OME-Zarr
    level, read lazily by zarrdirect.

    Options: level (the OME-Zarr level, default 0 for an image), name (a lone array's variable
    name, default the image's name or the folder's without ".zarr"), and xarray's CF decoding
    options for a group."""

    description = "Open a Zarr dataset, array or OME-Zarr level with zarrdirect (lazy, Dask-ready)"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "level", "name") + _DECODERS

    def open_dataset(self, filename_or_obj: Any, *, drop_variables: Any = None, level: int | None = None,
                     name: str | None = None, mask_and_scale: Any = None, decode_times: Any = None,
                     concat_characters: Any = None, decode_coords: Any = None, use_cftime: Any = None,
                     decode_timedelta: Any = None) -> xarray.Dataset:
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            raise InvalidArgumentError(
                f"the zarrdirect engine opens a folder path, not {type(filename_or_obj).__name__}")
        return open_zarrdirect_dataset(filename_or_obj, level=level, name=name, drop_variables=drop_variables,
                                       mask_and_scale=mask_and_scale, decode_times=decode_times,
                                       concat_characters=concat_characters, decode_coords=decode_coords,
                                       use_cftime=use_cftime, decode_timedelta=decode_timedelta)

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            return False
        path = os.fspath(filename_or_obj)
        return os.path.isdir(path) and any(
            os.path.exists(os.path.join(path, n)) for n in ("zarr.json", ".zarray", ".zgroup"))
