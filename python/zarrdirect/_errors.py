"""Exception types of zarrdirect.

Every error the library raises is a :class:`ZarrdirectError`, and also the builtin exception a
Python programmer would already catch for that situation: bad metadata is a ``ValueError``, an
unimplemented codec a ``NotImplementedError``, a failed read an ``OSError``. Code written against
zarr-python's or NumPy's exceptions therefore keeps working, and code that wants to tell
zarrdirect's failures apart can catch the specific class.

The C++ engine raises these by name (python/src/errors.cpp), keyed by ``zarrdirect::ErrorKind``.
"""

from __future__ import annotations

import errno
import os

__all__ = [
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
]


class ZarrdirectError(Exception):
    """Base class of every error zarrdirect raises."""

    kind = "error"


class InvalidMetadataError(ZarrdirectError, ValueError):
    """The array's metadata is malformed or contradicts the Zarr specification."""

    kind = "invalid_metadata"


class UnsupportedError(ZarrdirectError, NotImplementedError):
    """Well-formed, but uses a feature (codec, data type, grid) zarrdirect does not implement."""

    kind = "unsupported"


class CorruptDataError(ZarrdirectError, ValueError):
    """Chunk or shard bytes cannot be decoded to what the metadata promises."""

    kind = "corrupt_data"


class ZarrIOError(ZarrdirectError, OSError):
    """The operating system refused or cut short a read."""

    kind = "io"


class NotFoundError(ZarrIOError, FileNotFoundError):
    """No Zarr array or group at the path (the original kvikio module raised FileNotFoundError)."""

    kind = "io"

    @classmethod
    def at(cls, path: str | os.PathLike, what: str) -> "NotFoundError":
        """An error in OSError's own form, so ``.errno`` and ``.filename`` are set."""
        return cls(errno.ENOENT, what, os.fsdecode(path))


class CudaError(ZarrdirectError, RuntimeError):
    """The CUDA runtime or driver reported a failure."""

    kind = "cuda"


class InvalidArgumentError(ZarrdirectError, ValueError):
    """The caller asked for something impossible (a bad device, a mismatched ``out=``, ...)."""

    kind = "invalid_argument"


class InvalidIndexError(InvalidArgumentError, IndexError):
    """An index or region that does not fit the array, or indexing zarrdirect does not do
    (steps, fancy indexing). Both an ``IndexError``, as NumPy raises, and a ``ValueError``."""

    kind = "invalid_argument"


class CancelledError(ZarrdirectError):
    """A read stopped because its progress callback returned False.

    A read stopped by Ctrl-C raises ``KeyboardInterrupt`` instead, as any Python code would."""

    kind = "cancelled"
