"""Groups and OME-Zarr multiscale images.

Both wrap the C++ ``zarrdirect::Group`` / ``Multiscale`` (include/zarrdirect/group.hpp), which
use a group's consolidated metadata when it has some (v2 ``.zmetadata``, v3
``consolidated_metadata`` in zarr.json): listing members and describing pyramid levels then reads
one document instead of a file per member.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any, Iterator

import numpy as np

from . import _native
from ._array import Array, inner_chunk_shape, shard_shape, stored_state
from ._array import is_url
from ._array import open as open_array
from ._storage import kept, native_store_options
from ._errors import InvalidArgumentError, InvalidIndexError, NotFoundError

__all__ = ["Group", "GroupTree", "Multiscale", "open_group", "open_multiscale"]


def _existing(path: str | os.PathLike) -> str:
    path = os.fsdecode(path)
    if not is_url(path) and not os.path.exists(path):
        raise NotFoundError.at(path, "No such file or directory")
    return path


def _member_name(parent: str, relative: str) -> str:
    """zarr-python's h5py-style name of member `relative` of the group named `parent`."""
    return parent.rstrip("/") + "/" + relative.strip("/")


class Group(Mapping):
    """A Zarr group: attributes and members. ``group["name"]`` opens a member array or group,
    ``"a/b"`` reaches further down.

    A read-only mapping from member names to members, as zarr-python 2's Group: ``keys()``,
    ``items()``, ``values()``, ``in``, ``len`` and iteration (sorted names) work on the direct
    members; ``arrays()`` / ``groups()`` yield ``(name, member)`` pairs, ``array_keys()`` /
    ``group_keys()`` names, and ``tree()`` draws the hierarchy.
    """

    __slots__ = ("_native", "_name", "_storage_options")

    def __init__(self, native: "_native.Group", name: str = "/", storage_options: dict | None = None) -> None:
        self._native = native
        self._name = name
        # What it was opened with: its members open with the same (the native group keeps them
        # too), and it reopens with them where unpickled.
        self._storage_options = storage_options

    @property
    def path(self) -> str:
        """The group's folder (zarr-python's ``path`` is the key inside a store; see :attr:`name`)."""
        return self._native.path

    @property
    def name(self) -> str:
        """zarr-python's name: "/" for the group opened, "/a/b" for a member reached from it."""
        return self._name

    @property
    def basename(self) -> str:
        """The last part of :attr:`name` ("" for the group opened, as in zarr-python)."""
        return self._name.split("/")[-1]

    @property
    def read_only(self) -> bool:
        """True: zarrdirect groups are read-only."""
        return True

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

    def _member_kinds(self) -> list[tuple[str, str]]:
        return [(name, kind) for name, kind in self._native.members()]

    # -- zarr-python 2's iteration methods -----------------------------------------------------

    def array_keys(self, recurse: bool = False) -> Iterator[str]:
        """Names of the member arrays, sorted. With `recurse`, arrays of member groups follow at
        each group's place, by their own names (not paths), as zarr-python 2 does."""
        return self._array_iter(True, recurse)

    def arrays(self, recurse: bool = False) -> Iterator[tuple[str, Array]]:
        """``(name, Array)`` for each member array, sorted; `recurse` as in :meth:`array_keys`."""
        return self._array_iter(False, recurse)

    def _array_iter(self, keys_only: bool, recurse: bool) -> Iterator[Any]:
        for name, kind in self._member_kinds():
            if kind == "array":
                yield name if keys_only else (name, self[name])
            elif recurse:
                yield from self[name]._array_iter(keys_only, recurse)

    def group_keys(self) -> Iterator[str]:
        """Names of the member groups, sorted."""
        return (name for name, kind in self._member_kinds() if kind == "group")

    def groups(self) -> Iterator[tuple[str, "Group"]]:
        """``(name, Group)`` for each member group, sorted."""
        return ((name, self[name]) for name, kind in self._member_kinds() if kind == "group")

    def tree(self, expand: bool = False, level: int | None = None) -> "GroupTree":
        """The hierarchy below this group as text, drawn as zarr-python 2 draws it: groups by name,
        arrays with their shape and dtype. `level` limits the depth; `expand` is accepted for
        zarr-python's signature (it only affects its notebook widget)."""
        del expand
        return GroupTree(self, level)

    # -- the mapping ---------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Array | "Group":
        kind = self._native.node_type(name)
        if kind == "array":
            return Array(self._native.open_array(name), name=_member_name(self._name, name),
                         storage_options=self._storage_options)
        if kind == "group":
            return Group(self._native.open_group(name), _member_name(self._name, name), self._storage_options)
        raise KeyError(f"{name!r}: no array or group of that name in {self.path}")

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._native.node_type(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.members())

    def __len__(self) -> int:
        return len(self._native.members())

    def __reduce__(self) -> tuple:
        # Pickled as what it points to (folder and name), reopened where unpickled.
        return (_reopen_group, (self.path, self._name, self._storage_options))

    def __eq__(self, other: object) -> bool:
        # The same group, as zarr-python compares (store and path), not member by member as a
        # Mapping would: that would open every member.
        return isinstance(other, Group) and (self.path, self._name) == (other.path, other._name)

    def __hash__(self) -> int:
        return hash((self.path, self._name))

    def __repr__(self) -> str:
        return f"zarrdirect.Group({self.path!r}, zarr_format={self.zarr_format}, members={self.members()})"


class GroupTree:
    """What :meth:`Group.tree` returns: ``print(tree)`` or ``str(tree)`` draws the hierarchy with
    box-drawing characters, ``bytes(tree)`` with ASCII ones, both as zarr-python 2 does."""

    __slots__ = ("_group", "_level")

    _UNICODE = ("\u251c", "\u2514", "\u2502", "\u2500")  # ├ └ │ ─
    _ASCII = ("+", "+", "|", "-")

    def __init__(self, group: Group, level: int | None) -> None:
        self._group = group
        self._level = level

    def _lines(self, glyphs: tuple[str, str, str, str]) -> list[str]:
        branch, last_branch, vertical, horizontal = glyphs
        root = self._group
        lines = [root.name.split("/")[-1] or "/"]
        # (native group, prefix of its children's lines, depth, children not drawn yet): a list,
        # not recursion, so hierarchies of any depth draw.
        pending: list[tuple[Any, str, int, list]] = []

        def children_of(native: Any) -> list:
            return list(reversed(native.members()))  # popped from the end: first name first

        pending.append((root._native, " ", 0, children_of(root._native)))
        while pending:
            native, prefix, depth, members = pending[-1]
            if not members or (self._level is not None and depth >= self._level):
                pending.pop()
                continue
            name, kind = members.pop()
            is_last = not members
            label = name
            if kind == "array":
                metadata = native.array_metadata(name)
                label += f" {tuple(metadata['shape'])} {np.dtype(metadata['typestr'])}"
            lines.append(f"{prefix}{last_branch if is_last else branch}{horizontal * 2} {label}")
            if kind == "group":
                child = native.open_group(name)
                child_prefix = prefix + (" " if is_last else vertical) + "   "
                pending.append((child, child_prefix, depth + 1, children_of(child)))
        return lines

    def __str__(self) -> str:
        return "\n".join(self._lines(self._UNICODE))

    def __bytes__(self) -> bytes:
        return "\n".join(self._lines(self._ASCII)).encode()

    def __repr__(self) -> str:
        return str(self)


class Multiscale:
    """An OME-Zarr multiscale image (0.4: "multiscales" in a v2 group's .zattrs; 0.5: under
    "ome" in a v3 group's attributes). Level 0 is the full resolution.

    A sequence of its levels' arrays: ``image[1]``, ``image[-1]`` (the coarsest), ``len(image)``,
    ``for level in image``. An index past the end is an IndexError (InvalidIndexError)."""

    __slots__ = ("_native", "_levels", "_storage_options")

    def __init__(self, native: "_native.Multiscale", storage_options: dict | None = None) -> None:
        self._native = native
        self._storage_options = storage_options
        self._levels = []
        for index, level in enumerate(native.levels):
            metadata = native.level_metadata(index)
            self._levels.append({
                "path": level["path"],
                "shape": tuple(metadata["shape"]),
                "dtype": np.dtype(metadata["typestr"]),
                "chunks": inner_chunk_shape(metadata),
                "shards": shard_shape(metadata),
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
        """Per level: path, shape, dtype, chunks, shards, scale and translation (None when absent;
        chunks and shards as :attr:`Array.chunks` and :attr:`Array.shards` report them).

        scale and translation place the level in physical space, one value per axis
        (``physical = scale * index + translation``, in the axes' units): the dataset's own
        coordinateTransformations followed by the multiscale's, as NGFF 0.4 / 0.5 apply them
        (scale = s_dataset * s_multiscale, translation = t_dataset * s_multiscale + t_multiscale).
        """
        return copy.deepcopy(self._levels)

    @property
    def attrs(self) -> dict:
        return self._native.group.attributes

    @property
    def group(self) -> Group:
        return Group(self._native.group, storage_options=self._storage_options)

    def _index(self, level: int) -> int:
        count = len(self._levels)
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
            raise InvalidArgumentError(f"level must be an integer, not {level!r}")
        index = int(level) + count if level < 0 else int(level)
        if not 0 <= index < count:
            raise InvalidIndexError(f"level {level} requested, the image has {count} levels")
        return index

    def level(self, level: int) -> Array:
        """The array of `level` (negative counts from the coarsest)."""
        index = self._index(level)
        array = open_array(self._native.level_path(index), storage_options=self._storage_options)
        array._name = _member_name("/", self._levels[index]["path"])
        return array

    def __getitem__(self, level: int) -> Array:
        return self.level(level)

    def __len__(self) -> int:
        return len(self._levels)

    def __iter__(self) -> Iterator[Array]:
        """The levels' arrays, full resolution first."""
        return (self.level(index) for index in range(len(self._levels)))

    def read(self, level: int = 0, region: Any = None, device: Any = None, out: Any = None,
             stream: Any = None, threads: int | None = None, progress: Any = False, *,
             return_stats: bool = False) -> Any:
        """Reads `level` (default: full resolution); the other arguments are Array.read's."""
        return self.level(level).read(region, device, out, stream, threads, progress, return_stats=return_stats)

    def __reduce__(self) -> tuple:
        # Pickled as its group's folder, reopened (levels and all) where unpickled.
        return (_reopen_multiscale, (self.path, self._storage_options))

    def __dask_tokenize__(self) -> tuple:
        """Path plus the stored state of the whole image (every level's files)."""
        return ("zarrdirect.Multiscale", self.path, stored_state(self.path))

    def __repr__(self) -> str:
        shapes = ", ".join(str(level["shape"]) for level in self._levels)
        return f"zarrdirect.Multiscale({self.path!r}, version={self.version!r}, levels=[{shapes}])"


def _reopen_group(path: str, name: str, storage_options: dict | None = None) -> Group:
    return Group(_native.Group.open(path, native_store_options(storage_options)), name, storage_options)


def open_group(path: str | os.PathLike, *, storage_options: dict | None = None) -> Group:
    """Opens the Zarr group (v2 or v3) in folder `path` or at an http(s):// URL.
    `storage_options`: as for zarrdirect.open (headers, bearer token, ...), used for every member."""
    options = native_store_options(storage_options)
    return Group(_native.Group.open(_existing(path), options), storage_options=kept(storage_options))


def _reopen_multiscale(path: str, storage_options: dict | None = None) -> "Multiscale":
    return open_multiscale(path, storage_options=storage_options)


def open_multiscale(path: str | os.PathLike, *, storage_options: dict | None = None) -> Multiscale:
    """Opens the OME-Zarr multiscale image (its first "multiscales" entry) in group `path` or at
    an http(s):// URL. `storage_options`: as for zarrdirect.open, used for every level."""
    options = native_store_options(storage_options)
    return Multiscale(_native.Multiscale.open(_existing(path), options), kept(storage_options))
