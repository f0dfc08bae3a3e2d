"""Reading into memory the caller already has: the ``out=`` argument.

``out`` may be a NumPy array (host memory), a PyTorch tensor (host or CUDA, read through its own
accessors), or anything that publishes ``__cuda_array_interface__`` -- CuPy arrays, Numba device
arrays -- so no GPU library is imported here. Whatever it is, it must be writable, have the
selection's shape and the array's dtype in native byte order. Its strides are honoured, so a
non-contiguous view (a column block of a bigger matrix, a slice of a batch) is filled in place.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from ._errors import InvalidArgumentError
from ._options import is_torch_tensor
from ._region import Selection

__all__ = ["Target", "target_of"]


class Target(NamedTuple):
    pointer: int
    byte_strides: list[int]  # one per dimension of the array (the region), not of `out`
    device: str  # "cpu" | "cuda"
    stream: Optional[int]  # from the CUDA array interface; None: no stream to order after


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _check(shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...], selection: Selection, expected: np.dtype,
           what: str) -> None:
    if dtype != expected:
        order = " (zarrdirect writes native byte order)" if dtype.newbyteorder("=") == expected else ""
        raise InvalidArgumentError(f"out= {what} has dtype {dtype}, the array has {expected}{order}")
    if shape != selection.shape:
        raise InvalidArgumentError(f"out= {what} has shape {shape}, the selection has shape {selection.shape}")
    for extent, stride in zip(shape, strides):
        if extent > 1 and stride == 0:
            raise InvalidArgumentError(f"out= {what} has a zero stride (broadcast): its elements overlap")


def _region_strides(strides: tuple[int, ...], selection: Selection) -> list[int]:
    """Strides of `out` re-indexed by array dimension: a dimension an integer index dropped has
    extent 1, so its stride never matters; a new axis (None) has no array dimension."""
    full = [0] * len(selection.region)
    for out_dim, source in enumerate(selection.source_dims):
        if source is not None:
            full[source] = int(strides[out_dim])
    return full


def _torch_target(out: Any, selection: Selection, dtype: np.dtype, device: str) -> Target:
    """A PyTorch tensor, read through its own accessors: its __cuda_array_interface__ lacks some
    element types (the unsigned ones, in some versions), and a CPU tensor has no array interface."""
    kind = "cuda" if out.is_cuda else "cpu"
    if kind != device:
        raise InvalidArgumentError(f"out= is a PyTorch tensor on {out.device}, but device={device!r} was asked for")
    if out.requires_grad:
        raise InvalidArgumentError("out= is a PyTorch tensor that requires grad: pass out.detach()")
    name = str(out.dtype).removeprefix("torch.")
    try:
        out_dtype = np.dtype(name)
    except TypeError:
        raise InvalidArgumentError(f"out= has dtype {out.dtype}, the array has {dtype}") from None
    itemsize = out.element_size()
    strides = tuple(int(s) * itemsize for s in out.stride())
    _check(tuple(int(e) for e in out.shape), out_dtype, strides, selection, dtype, "tensor")
    return Target(int(out.data_ptr()), _region_strides(strides, selection), kind, None)


def target_of(out: Any, selection: Selection, dtype: np.dtype, device: str) -> Target:
    """Where a read into `out` writes, after checking `out` can take it."""
    if is_torch_tensor(out):
        return _torch_target(out, selection, dtype, device)
    interface = getattr(out, "__cuda_array_interface__", None)
    if interface is not None:
        if device != "cuda":
            raise InvalidArgumentError("out= is a CUDA array, but device='cpu' was asked for")
        if interface.get("mask") is not None:
            raise InvalidArgumentError("out= is a masked CUDA array; zarrdirect writes plain arrays")
        shape = tuple(int(e) for e in interface["shape"])
        out_dtype = np.dtype(interface["typestr"])
        pointer, read_only = interface["data"]
        if read_only:
            raise InvalidArgumentError("out= is read-only (its __cuda_array_interface__ says so)")
        strides = interface.get("strides")
        strides = _c_strides(shape, out_dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
        _check(shape, out_dtype, strides, selection, dtype, "CUDA array")
        stream = interface.get("stream")  # absent before version 3 of the interface
        return Target(int(pointer or 0), _region_strides(strides, selection), "cuda", int(stream) if stream else None)

    if isinstance(out, np.ndarray):
        if device != "cpu":
            raise InvalidArgumentError(
                "out= is a NumPy array in host memory, but device='cuda' was asked for: pass a CuPy array or "
                "a PyTorch CUDA tensor to read into GPU memory"
            )
        if not out.flags.writeable:
            raise InvalidArgumentError("out= is a read-only NumPy array")
        _check(tuple(out.shape), out.dtype, tuple(out.strides), selection, dtype, "array")
        pointer = out.__array_interface__["data"][0]
        return Target(int(pointer), _region_strides(tuple(out.strides), selection), "cpu", None)

    raise InvalidArgumentError(
        f"out= must be a NumPy array or a CUDA array (CuPy, PyTorch, Numba: anything with "
        f"__cuda_array_interface__), not {type(out).__name__}"
    )
