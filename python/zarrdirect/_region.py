"""From NumPy-style indices to the boxes zarrdirect reads.

The engine reads one box per call: a half-open ``[start, stop)`` range on every dimension. This
module maps what Python users write -- ``arr[10:20, :, 5]``, ``arr[..., -1]``, the string
``"0:10,:,5"`` -- onto such a box and onto the shape NumPy would give the result (integers drop
their dimension, ``None`` adds one). Slice steps (negative too) and, through ``arr.oindex``,
integer arrays and boolean masks per axis become a selection the engine reads chunk by chunk,
visiting only the chunks that hold a selected element. ``arr.vindex`` takes points (coordinate
selection, NumPy's fancy indexing with an array on every axis): :func:`select_points` broadcasts
them into one coordinate list per axis.
"""

from __future__ import annotations

import operator
import re
from typing import Any, NamedTuple, Sequence

import numpy as np

from ._errors import InvalidIndexError

__all__ = ["Selection", "Points", "select", "select_points", "parse_region_string"]


class Selection(NamedTuple):
    """What to read and how to present it."""

    region: list[tuple[int, int]]
    """One ``(start, stop)`` per dimension of the array: the box read, or for a selection beyond a
    box (``axes`` set) the smallest box that holds it."""
    shape: tuple[int, ...]
    """The shape of the result, as NumPy indexing would give it."""
    source_dims: tuple[int | None, ...]
    """For each dimension of the result, the array dimension it comes from (None: a new axis)."""
    scalar: bool
    """Every dimension was picked by an integer: NumPy returns a scalar for such an index."""
    axes: tuple | None = None
    """None for a box; otherwise per array dimension what the engine picks: an ``int`` index,
    a ``(start, stop, step)`` slice (None for an open bound) or a 1-d int64 array of indices."""


def _bad(message: str) -> InvalidIndexError:
    return InvalidIndexError(message)


def _as_integer(item: Any) -> int | None:
    """The integer an index item stands for, or None when it is not one (bools are not)."""
    if isinstance(item, (bool, np.bool_)):
        return None
    try:
        return operator.index(item)
    except TypeError:
        return None


def _slice_axis(item: slice, extent: int, axis: int) -> tuple[int, int, int]:
    """NumPy's (start, stop, step) of a slice on an axis of `extent`, and the count it picks."""
    for bound in (item.start, item.stop, item.step):
        if bound is not None and _as_integer(bound) is None:
            raise _bad(f"slice bound {bound!r} on axis {axis} is not an integer")
    step = 1 if item.step is None else _as_integer(item.step)
    if step == 0:
        raise _bad(f"slice step cannot be zero (axis {axis})")
    start, stop, step = slice(item.start, item.stop, step).indices(extent)
    # A step longer than the axis picks the start alone, as the axis's extent does; clamping keeps
    # the engine's int64 step from overflowing (arr[::2**64] was a pybind11 cast error).
    longest = max(extent, 1)
    if abs(step) > longest:
        step = longest if step > 0 else -longest
    return start, stop, step


def _engine_slice(start: int, stop: int, step: int) -> tuple:
    """A resolved slice for the engine. After slice.indices() with a negative step, a stop of -1
    means "through element 0" (an open bound) and a start of -1 an empty selection."""
    if start < 0:
        return (0, 0, step)
    return (start, stop if stop >= 0 else None, step)


def _index_array(item: Any, extent: int, axis: int) -> np.ndarray | None:
    """Integer indices (wrapped, checked) of a list, array or boolean mask; None if not one."""
    if isinstance(item, (list, np.ndarray)) or (hasattr(item, "__array__") and not np.isscalar(item)):
        values = np.asarray(item)
    else:
        return None
    if values.dtype == np.bool_:
        if values.ndim != 1 or values.shape[0] != extent:
            raise _bad(f"boolean index did not match indexed array along axis {axis}; size of axis is "
                       f"{extent} but size of corresponding boolean axis is "
                       f"{values.shape[0] if values.ndim else 0}")
        return np.flatnonzero(values).astype(np.int64)
    if values.size == 0 and isinstance(item, (list, tuple)):
        values = values.astype(np.int64)  # NumPy takes an empty list as integers (an empty float array, not)
    # Signed or unsigned integers only: timedelta64 counts as an integer to issubdtype.
    if values.dtype.kind not in "iu":
        raise _bad("arrays used as indices must be of integer (or boolean) type")
    if values.ndim != 1:
        raise _bad(f"orthogonal indexing takes 1-d index arrays per axis; axis {axis} has {values.ndim} dimensions")
    values = values.astype(np.int64)
    bad = (values < -extent) | (values >= extent)
    if bad.any():
        raise _bad(f"index {int(values[bad][0])} is out of bounds for axis {axis} with size {extent}")
    return np.where(values < 0, values + extent, values)


def _bounds_of(axes: list, shape: Sequence[int]) -> list[tuple[int, int]]:
    region = []
    for item, extent in zip(axes, shape):
        if isinstance(item, int):
            region.append((item, item + 1))
        elif isinstance(item, tuple):
            picked = range(*slice(*item).indices(extent))
            region.append((min(picked), max(picked) + 1) if len(picked) else (0, 0))
        else:
            region.append((int(item.min()), int(item.max()) + 1) if item.size else (0, 0))
    return region


def select(key: Any, shape: Sequence[int], orthogonal: bool = False) -> Selection:
    """What ``array[key]`` means for an array of ``shape`` (``array.oindex[key]`` with
    `orthogonal`: integer arrays, lists and boolean masks per axis as well, no None)."""
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    ellipses = sum(1 for item in items if item is Ellipsis)
    if ellipses > 1:
        raise _bad("an index can only have a single ellipsis ('...')")
    if orthogonal and any(item is None for item in items):
        raise _bad("orthogonal indexing does not take None (np.newaxis)")
    consumed = sum(1 for item in items if item is not Ellipsis and item is not None)
    if consumed > ndim:
        raise _bad(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")

    axes: list = []
    out_shape: list[int] = []
    source_dims: list[int | None] = []
    boxed = True
    axis = 0

    def whole() -> None:
        nonlocal axis
        axes.append((0, shape[axis], 1))
        out_shape.append(shape[axis])
        source_dims.append(axis)
        axis += 1

    for item in items:
        if item is Ellipsis:
            for _ in range(ndim - consumed):
                whole()
            continue
        if item is None:
            out_shape.append(1)
            source_dims.append(None)
            continue
        extent = shape[axis]
        if isinstance(item, slice):
            start, stop, step = _slice_axis(item, extent, axis)
            count = len(range(start, stop, step))
            if step != 1:
                boxed = False
            axes.append(_engine_slice(start, stop, step) if step != 1 else (start, max(start, stop), 1))
            out_shape.append(count)
            source_dims.append(axis)
            axis += 1
            continue
        index = _as_integer(item)
        if index is None:
            listed = _index_array(item, extent, axis) if orthogonal else None
            if listed is None:
                if orthogonal:
                    raise _bad(f"index {item!r} on axis {axis} is not an integer, a slice, an integer "
                               "array or list, or a boolean mask")
                raise _bad(f"index {item!r} on axis {axis}: arr[...] takes integers, slices, Ellipsis "
                           "and None; for fancy indexing (integer arrays and boolean masks per axis) "
                           "use arr.oindex[...]")
            boxed = False
            axes.append(listed)
            out_shape.append(int(listed.size))
            source_dims.append(axis)
            axis += 1
            continue
        position = index + extent if index < 0 else index
        if not 0 <= position < extent:
            raise _bad(f"index {index} is out of bounds for axis {axis} with size {extent}")
        axes.append(position)
        axis += 1
    while axis < ndim:  # dimensions the key did not mention are read whole
        whole()
    scalar = ellipses == 0 and not out_shape and all(item is not None for item in items)
    if boxed:
        region = [(a, a + 1) if isinstance(a, int) else (a[0], a[1]) for a in axes]
        return Selection(region, tuple(out_shape), tuple(source_dims), scalar)
    return Selection(_bounds_of(axes, shape), tuple(out_shape), tuple(source_dims), scalar, tuple(axes))


class Points(NamedTuple):
    """A coordinate selection: which elements to read and how to present them."""

    axes: list
    """Per array dimension a 1-d int64 array of indices (wrapped, in bounds), one per point, in
    C order of :attr:`shape`."""
    shape: tuple[int, ...]
    """The shape of the result: the index arrays' broadcast shape, as NumPy fancy indexing gives."""
    scalar: bool
    """Every axis was picked by a plain integer: NumPy returns a scalar."""


def select_points(key: Any, shape: Sequence[int]) -> Points:
    """What ``array.vindex[key]`` means for an array of ``shape``, as in zarr-python: an integer
    or an integer array (list) on every axis, broadcast against each other (negative indices
    count from the end), or one boolean mask of the array's shape."""
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    if ndim == 0:
        raise _bad("vindex needs an array of at least one dimension")
    if len(items) == 1 and not isinstance(items[0], (bool, np.bool_)):
        mask = np.asarray(items[0]) if isinstance(items[0], (list, np.ndarray)) else None
        if mask is not None and mask.dtype == np.bool_:
            if mask.shape != tuple(shape):
                raise _bad(f"vindex: a boolean mask must have the array's shape {tuple(shape)}, not {mask.shape}")
            axes = [np.ascontiguousarray(a, dtype=np.int64) for a in np.nonzero(mask)]
            return Points(axes, (int(axes[0].size),), False)
    for axis, item in enumerate(items):
        if isinstance(item, slice) or item is Ellipsis or item is None:
            raise _bad(f"vindex takes integer arrays on every axis; axis {axis} got {item!r}: use arr.oindex[...] "
                       "or arr[...] for slices")
    if len(items) != ndim:
        raise _bad(f"vindex takes one integer array (or integer) per axis: the array has {ndim} dimensions, "
                   f"the index {len(items)} items")
    arrays = []
    for axis, item in enumerate(items):
        integer = _as_integer(item)
        if integer is not None:
            # Checked before the cast: NumPy raises OverflowError past int64.
            if not -shape[axis] <= integer < shape[axis]:
                raise _bad(f"index {integer} is out of bounds for axis {axis} with size {shape[axis]}")
            values = np.asarray(integer, dtype=np.int64)
        else:
            try:
                values = np.asarray(item)
            except ValueError:  # a ragged nested list
                raise _bad(f"vindex: axis {axis} index is not a rectangular integer array") from None
            if values.size == 0 and isinstance(item, (list, tuple)):
                values = values.astype(np.int64)  # an empty list is integers to NumPy; an empty float array is not
            # Signed or unsigned integers only: timedelta64 counts as an integer to issubdtype.
            if values.dtype.kind not in "iu":
                raise _bad(f"vindex: axis {axis} index must be an integer array (or an integer), not "
                           f"{'a boolean array' if values.dtype == np.bool_ else values.dtype}; a boolean mask "
                           "selects points only as the whole index, of the array's shape")
            # uint64 past int64's range would wrap to a negative (valid) index in the cast.
            if values.dtype.kind == "u" and values.size and int(values.max()) >= shape[axis]:
                raise _bad(f"index {int(values.max())} is out of bounds for axis {axis} with size {shape[axis]}")
            values = values.astype(np.int64)
        arrays.append(values)
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise _bad(f"vindex: the index arrays' shapes {shapes} do not broadcast together") from None
    out_shape = broadcast[0].shape
    axes = []
    for axis, (values, extent) in enumerate(zip(broadcast, shape)):
        flat = np.ascontiguousarray(values.reshape(-1), dtype=np.int64)
        bad = (flat < -extent) | (flat >= extent)
        if bad.any():
            raise _bad(f"index {int(flat[bad][0])} is out of bounds for axis {axis} with size {extent}")
        axes.append(np.where(flat < 0, flat + extent, flat))
    scalar = all(_as_integer(item) is not None and not isinstance(item, np.ndarray) for item in items)
    return Points(axes, tuple(int(e) for e in out_shape), scalar)


_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_region_string(text: str) -> tuple:
    """``"0:10,:,5"`` -> ``(slice(0, 10), slice(None), 5)``; ``"..."`` is Ellipsis, ``""`` everything.

    Read with NumPy's meaning: a bare integer drops its dimension, as ``arr[0:10, :, 5]`` would;
    ``"::-2"`` is a step.
    (The CLI's --region keeps it with extent 1, since a file on disk has no "dropped" axes.)
    """
    text = text.strip()
    if not text:
        return ()
    items: list[Any] = []

    def integer(digits: str) -> int:
        # ASCII digits with an optional sign, as the CLI and the C++ parser read them: Python's
        # int() also takes "1_0" (10) and other scripts' digits ("\u0661" is 1).
        if not _INTEGER.fullmatch(digits):
            raise ValueError(digits)
        return int(digits)

    for part in text.split(","):
        part = part.strip()
        try:
            if part == "...":
                items.append(Ellipsis)
            elif ":" in part:
                bounds = [p.strip() for p in part.split(":")]
                if len(bounds) > 3:
                    raise ValueError
                items.append(slice(*(integer(b) if b else None for b in bounds)))
            else:
                items.append(integer(part))
        except ValueError:
            raise _bad(
                f"region {text!r}: {part!r} is not an integer, a slice such as 2:5, ::2 or ::-1, or '...'"
            ) from None
    return tuple(items)
