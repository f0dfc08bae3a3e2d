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
slices) are read as the orthogonal box that holds them -- per axis the slice, or the sorted
distinct indices of its array -- and NumPy then indexes that box with the key rewritten onto it,
so its placement and broadcasting rules apply unchanged (:class:`BoxPlan`). The box can be far
larger than the result (two arrays of n points span n^2 elements): past 16 times the result (and 1
Mi elements) such keys are refused with a message naming ``vindex`` and ``oindex``, as are index
arrays beside None and boolean masks of more than one dimension beside other items.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ._errors import InvalidIndexError
from ._region import Points, Selection, _as_integer, select, select_points

__all__ = ["BoxPlan", "IndexPlan", "plan_index"]

# A box read for NumPy's general advanced indexing may hold this many times the result's elements
# (or up to _BOX_FLOOR elements whatever the result).
_BOX_FACTOR = 16
_BOX_FLOOR = 1 << 20


class BoxPlan(NamedTuple):
    """NumPy's advanced indexing through a box: ``arr.oindex[box_key][numpy_key]`` is ``arr[key]``
    (and writing goes through the same box, read, changed by NumPy, written back)."""

    box_key: tuple
    numpy_key: tuple


class IndexPlan(NamedTuple):
    """How to read ``arr[key]``: one of `selection` (a box or an orthogonal selection) and
    `points` is set; `move_to_front` names a result dimension NumPy puts first (or None)."""

    selection: Selection | None
    points: Points | None
    move_to_front: int | None = None
    box: BoxPlan | None = None


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
    # (A boolean mask among them goes through the box: NumPy takes it as its nonzero indices.)
    masks = [position for position in arrays if np.asarray(items[position]).dtype == np.bool_]
    if len(items) == len(shape) and all(_is_index_array(item) or _as_integer(item) is not None for item in items):
        if not masks and (len(arrays) > 1 or np.ndim(items[arrays[0]]) != 1):
            return IndexPlan(None, select_points(key, shape))
    if len(arrays) != 1 or np.ndim(items[arrays[0]]) != 1:
        box = _box_plan(items, shape)
        if box is None:
            raise _refused(key)
        return IndexPlan(None, None, None, box)
    # One 1-d index array among integers, slices and an Ellipsis: an orthogonal selection.
    selection = select(key, shape, orthogonal=True)
    return IndexPlan(selection, None, _numpy_front_dimension(items, arrays[0], len(shape)))


def _box_plan(items: tuple, shape: Sequence[int]) -> BoxPlan | None:
    """The box and the rewritten key for NumPy's general advanced indexing (module notes), or None
    where it does not apply (None in the key, a mask of several dimensions, a box too large)."""
    if sum(1 for item in items if item is Ellipsis) > 1:
        raise InvalidIndexError("an index can only have a single ellipsis ('...')")
    named = sum(1 for item in items if item is not Ellipsis)
    if named > len(shape):
        raise InvalidIndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {named} were indexed")
    expanded: list = []
    ellipsis_at: int | None = None  # where the Ellipsis's dimensions start in `expanded`
    for item in items:
        if item is Ellipsis:
            ellipsis_at = len(expanded)
            expanded.extend(slice(None) for _ in range(len(shape) - named))
        else:
            expanded.append(item)
    expanded.extend(slice(None) for _ in range(len(shape) - len(expanded)))
    box_key: list = []
    numpy_key: list = []
    box_elements = 1
    sliced_elements = 1
    advanced_shapes = []
    for axis, (item, extent) in enumerate(zip(expanded, shape)):
        if item is None:
            return None
        if isinstance(item, slice):
            count = len(range(*item.indices(extent)))
            box_key.append(item)
            numpy_key.append(slice(None))
            box_elements *= count
            sliced_elements *= count
            continue
        integer = _as_integer(item)
        if integer is not None:
            if not -extent <= integer < extent:
                raise InvalidIndexError(f"index {integer} is out of bounds for axis {axis} with size {extent}")
            # Kept as an axis of one in the box; NumPy still counts it among the advanced indices.
            box_key.append(np.array([integer % extent], dtype=np.int64))
            numpy_key.append(0)
            continue
        values = np.asarray(item)
        if values.dtype == np.bool_:
            if values.ndim != 1:
                return None
            if values.shape[0] != extent:
                raise InvalidIndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is "
                                        f"{extent} but size of corresponding boolean axis is {values.shape[0]}")
            values = np.flatnonzero(values)
        elif values.size == 0 and isinstance(item, (list, tuple)):
            values = values.astype(np.int64)
        if values.dtype.kind not in "iu":
            raise InvalidIndexError("arrays used as indices must be of integer (or boolean) type")
        if values.size and (int(values.max()) >= extent or int(values.min()) < -extent):
            wrong = int(values.max()) if int(values.max()) >= extent else int(values.min())
            raise InvalidIndexError(f"index {wrong} is out of bounds for axis {axis} with size {extent}")
        wrapped = np.where(values < 0, values + extent, values).astype(np.int64)
        distinct, inverse = np.unique(wrapped, return_inverse=True)
        box_key.append(distinct)
        numpy_key.append(inverse.reshape(wrapped.shape))
        box_elements *= distinct.size
        advanced_shapes.append(wrapped.shape)
    try:
        broadcast = np.broadcast_shapes(*advanced_shapes)
    except ValueError:
        shapes = " ".join(str(tuple(s)) for s in advanced_shapes)
        raise InvalidIndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}") from None
    result_elements = int(np.prod(broadcast, dtype=np.int64)) * sliced_elements
    if box_elements > max(_BOX_FACTOR * result_elements, _BOX_FLOOR):
        return None
    if ellipsis_at is not None:
        # NumPy keeps the Ellipsis as itself: even one that stands for no dimension separates the
        # advanced indices around it, which moves their dimension to the front (x[:, 0, ..., [1]]).
        count = len(shape) - named
        numpy_key[ellipsis_at:ellipsis_at + count] = [Ellipsis]
    return BoxPlan(tuple(box_key), tuple(numpy_key))


def _numpy_front_dimension(items: tuple, array_position: int, ndim: int) -> int | None:
    """The result dimension of the one index array when NumPy moves it to the front (None when it
    stays where the orthogonal selection puts it). NumPy treats integers as advanced indices once
    an array is present: when they and the array are not side by side in the key, the broadcast
    dimension goes first."""
    expanded: list[str] = []
    for position, item in enumerate(items):
        if item is Ellipsis:
            named = sum(1 for other in items if other is not Ellipsis)
            # An Ellipsis of no dimensions still separates the advanced indices around it (NumPy).
            expanded.extend(["slice"] * (ndim - named) if ndim > named else ["gap"])
        elif position == array_position:
            expanded.append("array")
        elif isinstance(item, slice):
            expanded.append("slice")
        else:
            expanded.append("integer")
    advanced = [k for k, kind in enumerate(expanded) if kind not in ("slice", "gap")]
    if advanced[-1] - advanced[0] + 1 == len(advanced):
        return None  # side by side: NumPy keeps the dimension where it stands, as oindex does
    dimension = sum(1 for kind in expanded[:expanded.index("array")] if kind == "slice")
    return dimension if dimension > 0 else None
