"""Writes to selections that are not boxes: ``arr[::2] = v``, ``arr.oindex[[3, 1], :] = v``,
``arr.vindex[zs, ys, xs] = v``, ``arr[mask] = v``.

The engine writes boxes. A strided, listed or point selection is written as zarr-python writes
it: chunk by chunk, only the chunks holding a selected element, each read, changed by NumPy's
assignment (broadcasting, casting and "last repeated index wins" exactly as an ndarray would)
and written back whole. So every chunk ends old or new, elements outside the selection keep their
values, and a chunk holding no selected element is never rewritten (another writer's chunks in
between are left alone). As in zarr-python, two writers changing the same chunk at once must be
kept apart by the caller.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError
from ._region import Points, Selection

__all__ = ["write_selection", "write_points"]


def _host_value(value: Any, dtype: np.dtype) -> np.ndarray:
    if hasattr(value, "__cuda_array_interface__") and not isinstance(value, np.ndarray):
        raise InvalidArgumentError(
            "a CUDA value is written to boxes only (integers and slices without a step); for a "
            "strided, listed or point selection pass a host (NumPy) value")
    return numpy_values(value, dtype)


def numpy_values(value: Any, dtype: np.dtype) -> np.ndarray:
    """`value` as an array of `dtype`, converted as NumPy's ``arr[key] = value`` converts it: a
    NaN, an infinity or a number too large for an integer type given as a scalar or a list raises
    (ValueError / OverflowError, as zarr-python 2 does); arrays are cast (astype) as NumPy casts them."""
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    host = np.asarray(value)
    if host.dtype == dtype:
        return host
    # astype alone wrote NaN into an int32 array as -2**31, silently.
    converted = np.empty(host.shape, dtype=dtype)
    converted[...] = value
    return converted


def _broadcast(value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    try:
        return np.broadcast_to(value, shape)
    except ValueError:
        raise InvalidArgumentError(
            f"a value of shape {value.shape} cannot be written to a selection of shape {shape}") from None


def _box(region: list[tuple[int, int]]) -> Selection:
    shape = tuple(stop - start for start, stop in region)
    return Selection(list(region), shape, tuple(range(len(region))), False)


def _chunk_region(array: Any, chunk: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(c * size, min((c + 1) * size, extent)) for c, size, extent in zip(chunk, array.chunks, array.shape)]


def _read_change_write(array: Any, region: list[tuple[int, int]], assign) -> None:
    """One chunk's read, change (`assign(current)`, current the box of `region`) and write."""
    box = _box(region)
    current, _ = array._read(box, "cpu", None, None, None, False)
    current = np.array(current, copy=True)  # writable, C order, owned here
    assign(current)
    array._write(box, current, None, None, False, False, False)


def write_selection(array: Any, selection: Selection, value: Any, move_to_front: int | None = None) -> None:
    """Writes `value` into an orthogonal or strided `selection` (``selection.axes`` set).
    `move_to_front`: the value is in NumPy's order for a key whose index array NumPy moves first
    (fancy indexing), and goes back to the selection's order here."""
    host = _host_value(value, array.dtype)
    if move_to_front is not None:
        host = np.moveaxis(_broadcast(host, _numpy_order(selection.shape, move_to_front)), 0, move_to_front)
    host = _broadcast(host, selection.shape)
    per_axis = []  # the selected indices of each array dimension, in the selection's order
    for item in selection.axes:
        if isinstance(item, (int, np.integer)):
            per_axis.append(np.array([item], dtype=np.int64))
        elif isinstance(item, tuple):
            first, stop, step = item
            per_axis.append(np.arange(first, -1 if stop is None else stop, step, dtype=np.int64))
        else:
            per_axis.append(np.asarray(item, dtype=np.int64))
    if any(indices.size == 0 for indices in per_axis):
        return  # nothing selected
    # Integers keep a dimension of one, None added none: the value's elements in the same order.
    grid = host.reshape(tuple(indices.size for indices in per_axis))
    chunk_of = [indices // size for indices, size in zip(per_axis, array.chunks)]
    # An orthogonal selection holds an element in every combination of the chunks each axis touches.
    for chunk in itertools.product(*(np.unique(ids) for ids in chunk_of)):
        region = _chunk_region(array, chunk)
        picks = [np.flatnonzero(ids == c) for ids, c in zip(chunk_of, chunk)]
        local = [indices[pick] - start for indices, pick, (start, _) in zip(per_axis, picks, region)]
        part = grid[np.ix_(*picks)]

        def assign(current: np.ndarray, local=local, part=part) -> None:
            current[np.ix_(*local)] = part

        _read_change_write(array, region, assign)


def _numpy_order(shape: tuple[int, ...], move_to_front: int) -> tuple[int, ...]:
    return (shape[move_to_front],) + shape[:move_to_front] + shape[move_to_front + 1:]


def write_points(array: Any, points: Points, value: Any) -> None:
    """Writes `value` (broadcast to the points' shape) at `points` (a coordinate selection)."""
    host = _broadcast(_host_value(value, array.dtype), points.shape).reshape(-1)
    if host.size == 0:
        return
    chunk_ids = np.stack([axis // size for axis, size in zip(points.axes, array.chunks)], axis=1)
    chunks, owner = np.unique(chunk_ids, axis=0, return_inverse=True)
    owner = owner.reshape(-1)
    order = np.argsort(owner, kind="stable")  # within a chunk the caller's order: the last repeat wins
    bounds = np.searchsorted(owner[order], np.arange(len(chunks) + 1))
    for number, chunk in enumerate(chunks):
        members = order[bounds[number]:bounds[number + 1]]
        region = _chunk_region(array, tuple(int(c) for c in chunk))
        local = tuple(axis[members] - start for axis, (start, _) in zip(points.axes, region))
        part = host[members]

        def assign(current: np.ndarray, local=local, part=part) -> None:
            current[local] = part

        _read_change_write(array, region, assign)
