"""Drop-in replacements for the kvikio prototype's functions (read_zarr_via_kvikio and the
read_zarr_to_gpu that dispatched to it).

Same names and the same result -- a cupy.ndarray of the whole array, on CuPy's current device --
but without the prototype's limits: compressed, filtered, F-order and sharded arrays read too,
chunks are read in parallel, and byte order is converted. CuPy is imported only when one of
these is called, as the prototype did with kvikio and cupy.
"""

from __future__ import annotations

import os
from typing import Any

from ._array import open as open_array

__all__ = ["read_zarr_to_gpu", "read_zarr_via_kvikio"]


def _require_cupy() -> Any:
    try:
        import cupy
    except ImportError as error:
        raise ImportError(
            "zarrdirect.read_zarr_to_gpu / read_zarr_via_kvikio return CuPy arrays, and cupy is not "
            "installed: pip install cupy-cuda12x (or the build matching your CUDA). Without CuPy, use "
            "zarrdirect.open(path).read(device='cuda') and hand the result to torch.from_dlpack."
        ) from error
    return cupy


def read_zarr_to_gpu(array_path: str | os.PathLike, *, threads: int | None = None, progress: Any = False) -> Any:
    """Loads the whole Zarr array (v2 or v3) at `array_path` into a new cupy.ndarray.

    The cupy array views zarrdirect's device memory (no copy) and keeps it alive.
    """
    cupy = _require_cupy()
    device = cupy.cuda.runtime.getDevice()
    data = open_array(array_path).read(device=f"cuda:{device}", threads=threads, progress=progress)
    return cupy.asarray(data)


def read_zarr_via_kvikio(array_path: str | os.PathLike) -> Any:
    """The prototype's name for :func:`read_zarr_to_gpu`. GPUDirect Storage is used when it runs
    natively and the chunks are stored uncompressed (ZARRDIRECT_IO_PATH=gds forces it); the
    result is the same either way."""
    return read_zarr_to_gpu(array_path)
