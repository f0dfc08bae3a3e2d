"""zarrdirect: Zarr v2/v3 arrays straight into NumPy or GPU memory.

    import zarrdirect
    arr = zarrdirect.open("volume.zarr")
    block = arr[0:64, :, :]                 # numpy.ndarray
    on_gpu = arr.cuda[0:64, :, :]           # zarrdirect.DeviceArray
    x = cupy.asarray(on_gpu)                # or torch.from_dlpack(on_gpu): no copy

    image = zarrdirect.open_multiscale("cells.ome.zarr")
    level1 = image.read(level=1, device="cuda")

Reads run in parallel in C++ with the GIL released; Ctrl-C stops them between chunks. Host
results are NumPy arrays over the engine's own memory (no copy), device results export
__cuda_array_interface__ and DLPack. GPU libraries (CuPy, PyTorch) are imported only by the
functions that need them.
"""

from __future__ import annotations

from ._errors import (
    CancelledError,
    CorruptDataError,
    CudaError,
    InvalidArgumentError,
    InvalidIndexError,
    InvalidMetadataError,
    NotFoundError,
    UnsupportedError,
    ZarrdirectError,
    ZarrIOError,
)

try:
    from . import _native
except ImportError as _error:  # pragma: no cover - depends on the build
    raise ImportError(
        "zarrdirect's compiled engine (zarrdirect._native) is missing or was built for another Python: "
        "build it with cmake -S <repo> -B build -DPython3_EXECUTABLE=$(which python3) && "
        f"make -C build zarrdirect_python ({_error})"
    ) from _error

from ._array import Array, open
from ._dropins import read_zarr_to_gpu, read_zarr_via_kvikio
from ._many import ReadFuture
from ._patches import PatchSampler
from ._group import Group, Multiscale, open_group, open_multiscale
from ._write import WritableArray, create, create_group, load, open, open_array, save, write_zarr_from_gpu
from ._multiscale_write import write_multiscale

DeviceArray = _native.DeviceArray
__version__: str = _native.__version__


def cuda_available() -> bool:
    """True when this build has CUDA and a device is usable from this process."""
    return bool(_native.cuda_available())


def cuda_device_count() -> int:
    """CUDA devices this process can use: ``device="cuda:N"`` (or ``device=N``) takes N below it.
    0 in a build without CUDA or without a usable device. CUDA_VISIBLE_DEVICES sets which are seen."""
    return int(_native.cuda_device_count())


def system_info() -> dict:
    """What this process can do with GPUs: CUDA build, devices, GPUDirect Storage, and which
    I/O path device reads take and why (the same as `zarrdirect info --system`)."""
    return _native.describe_system()


def pinned_pool_stats() -> dict:
    """The process's pool of pinned staging buffers, shared by device reads and writes
    (``ZARRDIRECT_PINNED_POOL_MB``): ``budget_bytes``, ``in_use_bytes``, ``idle_bytes``, and the
    buffers ``allocations`` and ``frees`` so far. Reads running at once (Dask's threads) should
    stop allocating once the pool is warm. All zero without CUDA."""
    return dict(_native.pinned_pool_stats())


def trim_pinned_pool() -> None:
    """Frees the pinned staging pool's idle buffers (those of running reads stay theirs), the GPU
    memory kept for GPU decoding, and the host result buffers kept for reuse."""
    _native.trim_pinned_pool()


def __getattr__(name: str):
    # zarrdirect.dask and zarrdirect.xarray import Dask / xarray, so they load when first named
    # (``zarrdirect.dask.from_zarr``) rather than with the package.
    if name in ("dask", "xarray"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Array",
    "DeviceArray",
    "Group",
    "ReadFuture",
    "PatchSampler",
    "Multiscale",
    "open",
    "open_array",
    "load",
    "open_group",
    "open_multiscale",
    "read_zarr_to_gpu",
    "read_zarr_via_kvikio",
    "WritableArray",
    "create",
    "create_group",
    "save",
    "write_zarr_from_gpu",
    "write_multiscale",
    "cuda_available",
    "cuda_device_count",
    "system_info",
    "pinned_pool_stats",
    "trim_pinned_pool",
    "ZarrdirectError",
    "InvalidMetadataError",
    "UnsupportedError",
    "CorruptDataError",
    "ZarrIOError",
    "NotFoundError",
    "CudaError",
    "InvalidArgumentError",
    "InvalidIndexError",
    "CancelledError",
    "__version__",
]
