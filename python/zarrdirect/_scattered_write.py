"""Writes to selections that are not boxes: ``arr[::2] = v``, ``arr.oindex[[3, 1], :] = v``,
``arr.vindex[zs, ys, xs] = v``, ``arr[mask] = v``.

The engine writes boxes. A strided, listed or point selection is written as zarr-python writes
it, by reading, changing and writing back: the smallest box holding the selection is read,
NumPy assigns the value into it (broadcasting, casting and "last repeated index wins" exactly as
an ndarray would), and the box is written back. Each chunk is still replaced whole, so every
chunk ends old or new, and elements outside the selection keep their values. The cost is the
box's chunks, read and rewritten: a sparse selection over a large extent touches much more than
it sets (write a box, or several, when that matters).
"""

from __future__ import annotations

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
    return np.asarray(value).astype(dtype, copy=False)


def _broadcast(value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    try:
        return np.broadcast_to(value, shape)
    except ValueError:
        raise InvalidArgumentError(
            f"a value of shape {value.shape} cannot be written to a selection of shape {shape}") from None


def _box(region: list[tuple[int, int]]) -> Selection:
    shape = tuple(stop - start for start, stop in region)
    return Selection(list(region), shape, tuple(range(len(region))), False)


def _read_change_write(array: Any, region: list[tuple[int, int]], assign) -> None:
    box = _box(region)
    if 0 in box.shape:
        return  # nothing selected
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
    per_axis = []
    for (start, _), item in zip(selection.region, selection.axes):
        if isinstance(item, (int, np.integer)):
            per_axis.append(np.array([item - start], dtype=np.int64))
        elif isinstance(item, tuple):
            first, stop, step = item
            per_axis.append(np.arange(first, -1 if stop is None else stop, step, dtype=np.int64) - start)
        else:
            per_axis.append(np.asarray(item, dtype=np.int64) - start)
    # Integers keep a dimension of one, None added none: the value's elements in the same order.
    grid_shape = tuple(len(indices) for indices in per_axis)

    def assign(current: np.ndarray) -> None:
        current[np.ix_(*per_axis)] = host.reshape(grid_shape)

    _read_change_write(array, selection.region, assign)


def _numpy_order(shape: tuple[int, ...], move_to_front: int) -> tuple[int, ...]:
    return (shape[move_to_front],) + shape[:move_to_front] + shape[move_to_front + 1:]


def write_points(array: Any, points: Points, value: Any) -> None:
    """Writes `value` (broadcast to the points' shape) at `points` (a coordinate selection)."""
    host = _broadcast(_host_value(value, array.dtype), points.shape).reshape(-1)
    if host.size == 0:
        return
    region = [(int(axis.min()), int(axis.max()) + 1) for axis in points.axes]

    def assign(current: np.ndarray) -> None:
        current[tuple(axis - start for axis, (start, _) in zip(points.axes, region))] = host

    _read_change_write(array, region, assign)
