"""Groups and OME-Zarr multiscale images.

Both wrap the C++ ``zarrdirect::Group`` / ``Multiscale`` (include/zarrdirect/group.hpp), which
use a group's consolidated metadata when it has some (v2 ``.zmetadata``, v3
``consolidated_metadata`` in zarr.json): listing members and describing pyramid levels then reads
one document instead of a file per member.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Iterator

import numpy as np

from . import _native
from ._array import Array
from ._array import open as open_array
from ._errors import InvalidArgumentError, NotFoundError

__all__ = ["Group", "Multiscale", "open_group", "open_multiscale"]


def _existing(path: str | os.PathLike) -> str:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise NotFoundError.at(path, "No such file or directory")
    return path


class Group:
    """A Zarr group: attributes and members. ``group["name"]`` opens a member array or group,
    ``"a/b"`` reaches further down."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Group") -> None:
        self._native = native

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def zarr_format(self) -> int:
        return self._native.zarr_format

    @property
    def attrs(self) -> dict:
        """The group's attributes; a copy, edits are not saved."""
        return self._native.attributes

    @property
    def consolidated(self) -> bool:
        """True when members come from consolidated metadata."""
        return self._native.consolidated

    def members(self) -> list[str]:
        """Names of the arrays and groups directly inside, sorted."""
        return [name for name, _ in self._native.members()]

    def arrays(self) -> list[str]:
        return [name for name, kind in self._native.members() if kind == "array"]

    def groups(self) -> list[str]:
        return [name for name, kind in self._native.members() if kind == "group"]

    def __getitem__(self, name: str) -> Array | "Group":
        kind = self._native.node_type(name)
        if kind == "array":
            return Array(self._native.open_array(name))
        if kind == "group":
            return Group(self._native.open_group(name))
        raise KeyError(f"{name!r}: no array or group of that name in {self.path}")

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._native.node_type(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.members())

    def __len__(self) -> int:
        return len(self._native.members())

    def __repr__(self) -> str:
        return f"zarrdirect.Group({self.path!r}, zarr_format={self.zarr_format}, members={self.members()})"


class Multiscale:
    """An OME-Zarr multiscale image (0.4: "multiscales" in a v2 group's .zattrs; 0.5: under
    "ome" in a v3 group's attributes). Level 0 is the full resolution."""

    __slots__ = ("_native", "_levels")

    def __init__(self, native: "_native.Multiscale") -> None:
        self._native = native
        self._levels = []
        for index, level in enumerate(native.levels):
            metadata = native.level_metadata(index)
            self._levels.append({
                "path": level["path"],
                "shape": tuple(metadata["shape"]),
                "dtype": np.dtype(metadata["typestr"]),
                "chunks": tuple(metadata["chunks"]),
                "scale": level["scale"] or None,
                "translation": level["translation"] or None,
            })

    @property
    def path(self) -> str:
        return self._native.group.path

    @property
    def version(self) -> str:
        return self._native.version

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def axes(self) -> list[dict]:
        """[{"name": "z", "type": "space", "unit": "micrometer"}, ...]; None where not given."""
        return self._native.axes

    @property
    def levels(self) -> list[dict]:
        """Per level: path, shape, dtype, chunks, scale and translation (None when absent)."""
        return copy.deepcopy(self._levels)

    @property
    def attrs(self) -> dict:
        return self._native.group.attributes

    @property
    def group(self) -> Group:
        return Group(self._native.group)

    def _index(self, level: int) -> int:
        count = len(self._levels)
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
            raise InvalidArgumentError(f"level must be an integer, not {level!r}")
        index = int(level) + count if level < 0 else int(level)
        if not 0 <= index < count:
            raise InvalidArgumentError(f"level {level} requested, the image has {count} levels")
        return index

    def level(self, level: int) -> Array:
        """The array of `level` (negative counts from the coarsest)."""
        return open_array(self._native.level_path(self._index(level)))

    def __getitem__(self, level: int) -> Array:
        return self.level(level)

    def __len__(self) -> int:
        return len(self._levels)

    def read(self, level: int = 0, region: Any = None, device: Any = None, out: Any = None,
             stream: Any = None, threads: int | None = None, progress: Any = False, *,
             return_stats: bool = False) -> Any:
        """Reads `level` (default: full resolution); the other arguments are Array.read's."""
        return self.level(level).read(region, device, out, stream, threads, progress, return_stats=return_stats)

    def __repr__(self) -> str:
        shapes = ", ".join(str(level["shape"]) for level in self._levels)
        return f"zarrdirect.Multiscale({self.path!r}, version={self.version!r}, levels=[{shapes}])"


def open_group(path: str | os.PathLike) -> Group:
    """Opens the Zarr group (v2 or v3) in folder `path`."""
    return Group(_native.Group.open(_existing(path)))


def open_multiscale(path: str | os.PathLike) -> Multiscale:
    """Opens the OME-Zarr multiscale image (its first "multiscales" entry) in group `path`."""
    return Multiscale(_native.Multiscale.open(_existing(path)))
