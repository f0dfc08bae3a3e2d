"""From NumPy-style indices to the boxes zarrdirect reads.

The engine reads one box per call: a half-open ``[start, stop)`` range on every dimension. This
module maps what Python users write -- ``arr[10:20, :, 5]``, ``arr[..., -1]``, the string
``"0:10,:,5"`` -- onto such a box and onto the shape NumPy would give the result (integers drop
their dimension, ``None`` adds one). Anything a box cannot express (steps, fancy or boolean
indexing) is refused with an error that says what to do instead, rather than silently reading
more than was asked for.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from ._errors import InvalidIndexError

__all__ = ["Selection", "select", "parse_region_string"]


class Selection(NamedTuple):
    """A box to read and how to present it."""

    region: list[tuple[int, int]]
    """One ``(start, stop)`` per dimension of the array."""
    shape: tuple[int, ...]
    """The shape of the result, as NumPy indexing would give it."""
    source_dims: tuple[int | None, ...]
    """For each dimension of the result, the array dimension it comes from (None: a new axis)."""
    scalar: bool
    """Every dimension was picked by an integer: NumPy returns a scalar for such an index."""


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


def _slice_bounds(item: slice, extent: int, axis: int) -> tuple[int, int]:
    if item.step is not None and _as_integer(item.step) != 1:
        raise _bad(
            f"slice step {item.step!r} on axis {axis} is not supported: zarrdirect reads contiguous "
            f"boxes; read the whole range and step the result with NumPy (e.g. arr[a:b][::{item.step}])"
        )
    for bound in (item.start, item.stop):
        if bound is not None and _as_integer(bound) is None:
            raise _bad(f"slice bound {bound!r} on axis {axis} is not an integer")
    start, stop, _ = slice(item.start, item.stop).indices(extent)
    return start, max(start, stop)


def select(key: Any, shape: Sequence[int]) -> Selection:
    """The box and result shape that ``array[key]`` means for an array of ``shape``."""
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    ellipses = sum(1 for item in items if item is Ellipsis)
    if ellipses > 1:
        raise _bad("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for item in items if item is not Ellipsis and item is not None)
    if consumed > ndim:
        raise _bad(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")

    region: list[tuple[int, int]] = []
    out_shape: list[int] = []
    source_dims: list[int | None] = []
    axis = 0
    for item in items:
        if item is Ellipsis:
            for _ in range(ndim - consumed):
                region.append((0, shape[axis]))
                out_shape.append(shape[axis])
                source_dims.append(axis)
                axis += 1
            continue
        if item is None:
            out_shape.append(1)
            source_dims.append(None)
            continue
        extent = shape[axis]
        if isinstance(item, slice):
            start, stop = _slice_bounds(item, extent, axis)
            region.append((start, stop))
            out_shape.append(stop - start)
            source_dims.append(axis)
            axis += 1
            continue
        index = _as_integer(item)
        if index is None:
            raise _bad(
                f"index {item!r} on axis {axis}: zarrdirect reads boxes, so only integers, slices without "
                "a step, Ellipsis and None are supported (no fancy or boolean indexing: read the box, "
                "then index the result with NumPy)"
            )
        position = index + extent if index < 0 else index
        if not 0 <= position < extent:
            raise _bad(f"index {index} is out of bounds for axis {axis} with size {extent}")
        region.append((position, position + 1))
        axis += 1
    while axis < ndim:  # dimensions the key did not mention are read whole
        region.append((0, shape[axis]))
        out_shape.append(shape[axis])
        source_dims.append(axis)
        axis += 1
    scalar = ellipses == 0 and not out_shape and all(item is not None for item in items)
    return Selection(region, tuple(out_shape), tuple(source_dims), scalar)


def parse_region_string(text: str) -> tuple:
    """``"0:10,:,5"`` -> ``(slice(0, 10), slice(None), 5)``; ``"..."`` is Ellipsis, ``""`` everything.

    Read with NumPy's meaning: a bare integer drops its dimension, as ``arr[0:10, :, 5]`` would.
    (The CLI's --region keeps it with extent 1, since a file on disk has no "dropped" axes.)
    """
    text = text.strip()
    if not text:
        return ()
    items: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if part == "...":
                items.append(Ellipsis)
            elif ":" in part:
                bounds = [p.strip() for p in part.split(":")]
                if len(bounds) > 3:
                    raise ValueError
                items.append(slice(*(int(b) if b else None for b in bounds)))
            else:
                items.append(int(part))
        except ValueError:
            raise _bad(
                f"region {text!r}: {part!r} is not an integer, a slice such as 2:5 or :, or '...'"
            ) from None
    return tuple(items)
