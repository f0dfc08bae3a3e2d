"""What ``arr[key]`` means when the key holds index arrays: NumPy's advanced indexing.

``arr[...]`` reads basic indices (integers, slices, ``...``, None) as a box or a strided
selection (:func:`select`). NumPy also takes integer arrays, lists and boolean masks there, and so
does zarr-python 3 (zarr-python 2 refused them). Two forms of NumPy's advanced indexing map onto
selections the engine already reads, with NumPy's result exactly:

* Points: an integer array (or integer) on every axis and nothing else, broadcast together, or
  one boolean mask of the array's shape -- what ``arr.vindex[key]`` reads.
* One index array: a single 1-d integer array, list or boolean mask on one axis, the other items
  integers, slices and ``...`` -- what ``arr.oindex[key]`` reads, with NumPy's placement of the
  selected dimension: where the array stands, unless integers and the array are separated by a
  slice, in which case NumPy puts it first.

Other mixes (several index arrays among slices, index arrays of more than one dimension beside
slices, index arrays with None) are refused with a message naming ``oindex`` and ``vindex``:
NumPy's rules for them are rarely what a caller means, and the two indexers say it plainly.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ._errors import InvalidIndexError
from ._region import Points, Selection, _as_integer, select, select_points

__all__ = ["IndexPlan", "plan_index"]


class IndexPlan(NamedTuple):
    """How to read ``arr[key]``: one of `selection` (a box or an orthogonal selection) and
    `points` is set; `move_to_front` names a result dimension NumPy puts first (or None)."""

    selection: Selection | None
    points: Points | None
    move_to_front: int | None = None


def _is_index_array(item: Any) -> bool:
    """A list, tuple or array-like used as an index array (not a scalar, slice, None or ...)."""
    if isinstance(item, list):
        return True
    # A 0-d integer array indexes as the integer it holds (NumPy's rule), handled by select().
    return (isinstance(item, np.ndarray) or hasattr(item, "__array__")) and not np.isscalar(item) and np.ndim(item) > 0


def _refused(key: Any) -> InvalidIndexError:
    return InvalidIndexError(
        f"index {key!r}: arr[...] takes integers, slices, Ellipsis and None, one index array (or boolean "
        "mask) among them, or index arrays on every axis; for other fancy indexing use arr.oindex[...] "
        "(per-axis selection) or arr.vindex[...] (points)")


def plan_index(key: Any, shape: Sequence[int]) -> IndexPlan:
    """What ``arr[key]`` reads for an array of `shape`, as NumPy would index an ndarray of it."""
    items = key if isinstance(key, tuple) else (key,)
    arrays = [position for position, item in enumerate(items) if _is_index_array(item)]
    if not arrays:
        return IndexPlan(select(key, shape), None)
    if any(item is None for item in items):
        raise _refused(key)
    # A boolean mask of the array's shape, alone: the True elements in C order (NumPy's x[mask]).
    if len(items) == 1 and np.asarray(items[0]).dtype == np.bool_ and np.ndim(items[0]) == len(shape) > 1:
        mask_shape = np.shape(items[0])
        if mask_shape != tuple(shape):
            axis = next(axis for axis, (a, b) in enumerate(zip(mask_shape, shape)) if a != b)
            raise InvalidIndexError(
                f"boolean index did not match indexed array along axis {axis}; size of axis is {shape[axis]} "
                f"but size of corresponding boolean axis is {mask_shape[axis]}")
        return IndexPlan(None, select_points(items[0], shape))
    # Index arrays (or integers) on every axis and nothing else: points, broadcast together.
    if len(items) == len(shape) and all(_is_index_array(item) or _as_integer(item) is not None for item in items):
        if len(arrays) > 1 or np.ndim(items[arrays[0]]) != 1 or np.asarray(items[arrays[0]]).dtype != np.bool_:
            return IndexPlan(None, select_points(key, shape))
    if len(arrays) != 1 or np.ndim(items[arrays[0]]) != 1:
        raise _refused(key)
    # One 1-d index array among integers, slices and an Ellipsis: an orthogonal selection.
    selection = select(key, shape, orthogonal=True)
    return IndexPlan(selection, None, _numpy_front_dimension(items, arrays[0], len(shape)))


def _numpy_front_dimension(items: tuple, array_position: int, ndim: int) -> int | None:
    """The result dimension of the one index array when NumPy moves it to the front (None when it
    stays where the orthogonal selection puts it). NumPy treats integers as advanced indices once
    an array is present: when they and the array are not side by side in the key, the broadcast
    dimension goes first."""
    expanded: list[str] = []
    for position, item in enumerate(items):
        if item is Ellipsis:
            named = sum(1 for other in items if other is not Ellipsis)
            expanded.extend("slice" for _ in range(ndim - named))
        elif position == array_position:
            expanded.append("array")
        elif isinstance(item, slice):
            expanded.append("slice")
        else:
            expanded.append("integer")
    advanced = [k for k, kind in enumerate(expanded) if kind != "slice"]
    if advanced[-1] - advanced[0] + 1 == len(advanced):
        return None  # side by side: NumPy keeps the dimension where it stands, as oindex does
    dimension = sum(1 for kind in expanded[:expanded.index("array")] if kind == "slice")
    return dimension if dimension > 0 else None
