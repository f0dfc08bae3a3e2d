"""Checking and converting the keyword arguments that every read takes.

Kept apart from the Array class so that the same rules apply to Array.read, Array.cuda[...],
Multiscale.read and the drop-in functions, and so that each rule's error message lives in one
place.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional

from ._errors import InvalidArgumentError
from ._progress import TextProgress

ProgressArg = Any  # False, None, True or a callable(done, total) -> bool | None


def is_torch_tensor(value: Any) -> bool:
    """A PyTorch tensor, recognised without importing torch."""
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "data_ptr") and hasattr(value, "is_cuda")


def parse_device(device: Any, out: Any = None) -> tuple[str, int]:
    """("cpu" | "cuda", device ordinal or -1 for the current one) for a ``device=`` argument.

    None means host memory, unless ``out`` is a CUDA array: then where ``out`` is. Accepts
    "cpu", "cuda" (the current device; "gpu" too), "cuda:N", an integer N (CUDA device N, as
    PyTorch takes it), and objects whose str() is one of those (torch.device, cupy.cuda.Device
    gives its number as int()). Whether device N exists is checked by the read, before it reads.
    """
    if device is None:
        if is_torch_tensor(out):  # its array interface may lack the element type (uint16)
            return ("cuda", -1) if out.is_cuda else ("cpu", -1)
        return ("cuda", -1) if hasattr(out, "__cuda_array_interface__") else ("cpu", -1)
    if isinstance(device, bool):
        raise InvalidArgumentError(f"device must be 'cpu', 'cuda', 'cuda:N' or an integer N, not {device!r}")
    if isinstance(device, numbers.Integral):
        device = int(device)
        if device < 0:
            raise InvalidArgumentError(f"device {device}: a CUDA device number is 0 or more")
        return "cuda", device
    if type(device).__module__.startswith("cupy") and hasattr(device, "id"):
        return "cuda", int(device.id)  # cupy.cuda.Device: str() is "<CUDA Device 1>"
    text = str(device).strip().lower()
    if text == "cpu":
        return "cpu", -1
    if text in ("cuda", "gpu"):
        return "cuda", -1
    if text.startswith("cuda:") and text[5:].isascii() and text[5:].isdigit():
        return "cuda", int(text[5:])
    raise InvalidArgumentError(f"device must be 'cpu', 'cuda', 'cuda:N' or an integer N, not {device!r}")


def parse_threads(threads: Any) -> int:
    """0 (the library's choice) for None, else a positive thread count."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidArgumentError(f"threads must be a positive integer or None, not {threads!r}")
    # The engine takes at most kMaxReaderThreads (256) anyway; capping here keeps 2**64 from
    # failing as a C++ integer conversion.
    return min(threads, 256)


def parse_stream(stream: Any) -> Optional[int]:
    """A cudaStream_t as an integer, or None for "no stream: return when the data is in place".

    Accepts an integer handle, a CuPy stream (.ptr), a PyTorch stream (.cuda_stream), or
    anything with either. 0, the legacy default stream as a null handle, also means None: the
    read then synchronises before it returns, which is what work on that stream would see anyway.
    """
    if stream is None:
        return None
    if isinstance(stream, bool):
        raise InvalidArgumentError("stream must be a CUDA stream or its handle, not a bool")
    handle = stream
    for attribute in ("ptr", "cuda_stream"):
        if not isinstance(stream, int) and hasattr(stream, attribute):
            handle = getattr(stream, attribute)
            break
    if not isinstance(handle, int) or handle < 0:
        raise InvalidArgumentError(
            f"stream must be a CUDA stream handle (int), a cupy.cuda.Stream or a torch.cuda.Stream, not {stream!r}"
        )
    return handle or None


def progress_callback(progress: ProgressArg) -> Optional[Callable[[int, int], Any]]:
    """The callable the engine reports to: None, a text bar on stderr (True), or the caller's."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return TextProgress()
    if callable(progress):
        return progress
    raise InvalidArgumentError(f"progress must be True, False or a callable(done, total), not {progress!r}")
