"""Many regions at once, reads in the background, and the decoded-chunk cache (Array methods).

The engine plans a batch as one: every chunk any region needs is fetched and decoded once and
copied into each region that needs it, so a training batch of overlapping random patches costs
the distinct chunks it touches, not one chunk read per patch.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import _native
from ._errors import InvalidArgumentError, InvalidIndexError
from ._options import parse_device, parse_stream, parse_threads
from ._out import target_of
from ._region import Selection, parse_region_string, select

__all__ = ["ReadFuture"]


def selection_of(region: Any, shape: tuple[int, ...]) -> Selection:
    """A region -- None, an index tuple, a slice or int, or "0:10,:,5" -- as a box and result shape."""
    if region is None:
        return select((), shape)
    if isinstance(region, str):
        return select(parse_region_string(region), shape)
    return select(region, shape)


def _plan(array: Any, regions: Sequence[Any], stack: bool) -> tuple[list, list]:
    selections, shapes = _selections(array, regions, stack)
    return [s.region for s in selections], shapes


def _selections(array: Any, regions: Sequence[Any], stack: bool) -> tuple[list, list]:
    if isinstance(regions, (str, tuple)) or regions is None:
        raise InvalidArgumentError("regions must be a list of regions (index tuples or strings such as '0:64,0:64')")
    selections = [selection_of(region, array.shape) for region in regions]
    for index, selection in enumerate(selections):
        # The batch engine reads boxes: a region with a step would come back as its bounding box,
        # unstepped and unreversed (arr.read_many([np.s_[::-1]]) returned the array forwards).
        if selection.axes is not None:
            raise InvalidIndexError(f"region {index} ({regions[index]!r}) has a slice step: read_many and the "
                                    "async reads take boxes (integers and slices without a step); read "
                                    "steps with arr[...] or arr.read()")
    shapes = [list(s.shape) for s in selections]
    if stack:
        for index, shape in enumerate(shapes[1:], start=1):
            if shape != shapes[0]:
                raise InvalidArgumentError(f"stack=True needs regions of one shape: region {index} has shape "
                                           f"{tuple(shape)}, region 0 {tuple(shapes[0])}")
        if not shapes:
            raise InvalidArgumentError("stack=True needs at least one region")
        shapes = shapes[:1]
    return selections, shapes


def _targets(array: Any, selections: list, out: Any, stack: bool, kind: str) -> list:
    """Where each region of a read into `out` goes: with stack, out[i] for region i (out of shape
    [len(regions), *shape]); without, the i-th array of the sequence `out`. Each is checked as
    ``arr.read(out=)`` checks its out (writable, shape, dtype; strides honoured)."""
    if stack:
        shape = tuple(getattr(out, "shape", ()))
        if not shape or int(shape[0]) != len(selections):
            raise InvalidArgumentError(f"out= has shape {shape}: stack=True needs a leading axis of "
                                       f"{len(selections)} (one per region)")
        parts = [out[i] for i in range(len(selections))]
    else:
        if isinstance(out, (str, bytes)) or not isinstance(out, Sequence):
            raise InvalidArgumentError("out= for stack=False is a list of arrays, one per region")
        if len(out) != len(selections):
            raise InvalidArgumentError(f"out= holds {len(out)} arrays for {len(selections)} regions")
        parts = list(out)
    targets = []
    for index, (part, selection) in enumerate(zip(parts, selections)):
        try:
            targets.append(target_of(part, selection, array.dtype, kind))
        except InvalidArgumentError as error:
            raise InvalidArgumentError(f"region {index}: {error}") from None
    return targets


def _into(array: Any, regions: Sequence[Any], device: Any, stack: bool, out: Any, stream: Any) -> tuple:
    selections, _ = _selections(array, regions, stack)
    first = out if stack or not isinstance(out, Sequence) or not len(out) else out[0]
    kind, ordinal = parse_device(device, first)
    targets = _targets(array, selections, out, stack, kind)
    handle = parse_stream(stream)
    if handle is None and targets:
        handle = targets[0].stream  # a CUDA array's own interface stream, as arr.read(out=) takes it
    return ([s.region for s in selections], [t.pointer for t in targets], [t.byte_strides for t in targets],
            kind, ordinal, handle)


def read_many(array: Any, regions: Sequence[Any], device: Any, stack: bool, threads: Any,
              return_stats: bool, out: Any = None, stream: Any = None) -> Any:
    if out is not None:
        pairs, pointers, strides, kind, ordinal, handle = _into(array, regions, device, stack, out, stream)
        stats = _native.read_many_into(array._native, pairs, pointers, strides, kind, ordinal, handle,
                                       parse_threads(threads))
        return (out, stats) if return_stats else out
    if stream is not None:
        raise InvalidArgumentError("stream= orders a read into out=: without out= the batch is read on the "
                                   "library's streams and ready when read_many returns")
    pairs, shapes = _plan(array, regions, stack)
    kind, ordinal = parse_device(device)
    data, stats = _native.read_many(array._native, pairs, shapes, kind, ordinal, bool(stack), parse_threads(threads))
    return (data, stats) if return_stats else data


def read_many_async(array: Any, regions: Sequence[Any], device: Any, stack: bool, threads: Any,
                    single: bool = False, out: Any = None, stream: Any = None) -> "ReadFuture":
    if out is not None:
        pairs, pointers, strides, kind, ordinal, handle = _into(array, regions, device, stack, out, stream)
        native = _native.read_many_into_async(array._native, pairs, pointers, strides, kind, ordinal, handle,
                                              parse_threads(threads), out)
        return ReadFuture(native, False)
    if stream is not None:
        raise InvalidArgumentError("stream= orders a read into out=: without out= the batch is read on the "
                                   "library's streams and ready when the future's result() returns")
    pairs, shapes = _plan(array, regions, stack)
    kind, ordinal = parse_device(device)
    native = _native.read_many_async(array._native, pairs, shapes, kind, ordinal, bool(stack), parse_threads(threads),
                                     single)
    return ReadFuture(native, single)


def read_boxes_async(array: Any, starts: np.ndarray, shape: Sequence[int], device: Any, threads: Any,
                     out: Any = None, stream: Any = None) -> "ReadFuture":
    """``read_many_async(stack=True)`` of the boxes ``starts[i] + [0, shape)``: the call a patch
    sampler makes for every batch, built from arrays rather than region by region (parsing 32
    index tuples and checking 32 views of `out` cost the training thread about half a millisecond
    a batch on the H100 machine). `out`, when given, is one batch array checked once."""
    starts = np.asarray(starts, dtype=np.int64)
    extent = np.asarray(shape, dtype=np.int64)
    if starts.ndim != 2 or starts.shape[1] != len(array.shape) or extent.shape != (len(array.shape),):
        raise InvalidArgumentError(f"boxes: starts of shape {starts.shape} and a box shape {tuple(extent)} for a "
                                   f"{len(array.shape)}-d array")
    if len(starts) == 0:
        raise InvalidArgumentError("stack=True needs at least one region")
    stops = starts + extent
    outside = np.flatnonzero((starts < 0).any(axis=1) | (stops > np.asarray(array.shape, dtype=np.int64)).any(axis=1)
                             | (extent < 0).any())
    if outside.size:
        index = int(outside[0])
        raise InvalidIndexError(f"box {index} at {starts[index].tolist()} of shape {tuple(extent.tolist())} lies "
                                f"outside the array's shape {tuple(array.shape)}")
    pairs = np.stack([starts, stops], axis=-1).tolist()
    batch_shape = (len(starts),) + tuple(int(e) for e in extent)
    if out is None:
        if stream is not None:
            raise InvalidArgumentError("stream= orders a read into out=")
        kind, ordinal = parse_device(device)
        native = _native.read_many_async(array._native, pairs, [list(batch_shape[1:])], kind, ordinal, True,
                                         parse_threads(threads), False)
        return ReadFuture(native, False)
    kind, ordinal = parse_device(device, out)
    target = target_of(out, select((), batch_shape), array.dtype, kind)
    step = target.byte_strides[0]
    pointers = [target.pointer + i * step for i in range(len(starts))]
    strides = [target.byte_strides[1:]] * len(starts)
    handle = parse_stream(stream)
    if handle is None:
        handle = target.stream
    native = _native.read_many_into_async(array._native, pairs, pointers, strides, kind, ordinal, handle,
                                          parse_threads(threads), out)
    return ReadFuture(native, False)


def set_cache_bytes(array: Any, nbytes: Any) -> None:
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise InvalidArgumentError(f"cache_bytes must be a non-negative integer, not {nbytes!r}")
    nbytes = min(nbytes, 2 ** 63 - 1)  # more than any machine holds: a C++ size, not an overflow
    _native.set_cache_bytes(array._native, nbytes)


def set_device_cache_bytes(array: Any, nbytes: Any) -> None:
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise InvalidArgumentError(f"device_cache_bytes must be a non-negative integer, not {nbytes!r}")
    nbytes = min(nbytes, 2 ** 63 - 1)  # more than any machine holds: a C++ size, not an overflow
    _native.set_device_cache_bytes(array._native, nbytes)


class ReadFuture:
    """A read running in the background (``arr.read_async``, ``arr.read_many_async``).

    ``result(timeout=None)`` waits and returns what the synchronous call would (raising its
    error; ``TimeoutError`` when `timeout` seconds pass first), ``done()`` says whether it has
    finished, ``cancel()`` stops it between chunks (``result()`` then raises CancelledError; a
    read that had finished keeps its result and cancel() returns False). ``stats`` holds what the
    read did once ``result()`` has returned. Safe to share between threads.
    """

    __slots__ = ("_native", "_single", "stats")

    def __init__(self, native: "_native.ReadFuture", single: bool) -> None:
        self._native = native
        self._single = single
        self.stats: dict | None = None

    def result(self, timeout: float | None = None) -> Any:
        if timeout is not None and timeout < 0:
            raise InvalidArgumentError(f"timeout must be None or >= 0, not {timeout!r}")
        data, self.stats = self._native.result(None if timeout is None else float(timeout))
        return data[0] if self._single else data

    def done(self) -> bool:
        return bool(self._native.done())

    def cancel(self) -> bool:
        return bool(self._native.cancel())

    def __repr__(self) -> str:
        return f"<zarrdirect.ReadFuture {'done' if self.done() else 'pending'}>"
