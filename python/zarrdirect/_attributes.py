"""zarrdirect's ``attrs``: a node's user attributes as a dict that saves each change.

As zarr-python's ``Attributes``: ``attrs["k"] = v``, ``del attrs["k"]``, ``attrs.update(...)``,
``attrs.pop(k)``, ``attrs.setdefault(k, v)``, ``attrs.put({...})`` and ``attrs.clear()`` save at
once (v3: zarr.json rewritten whole with the new "attributes"; v2: .zattrs), atomically, each
change applied under a lock to the attributes stored at that moment, so processes editing
different keys lose nothing. The object is a dict (``json.dumps(arr.attrs)`` works) holding a
copy of the attributes as the node was opened, updated after each save made through it; nested
values are that copy's (editing one in place saves nothing: assign it back). On a node opened
read-only every change is refused.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from ._errors import InvalidArgumentError

__all__ = ["Attributes"]

# save(set_json, remove, replace) -> the attributes saved; `replace`: set_json is the whole mapping.
Saver = Callable[[str, list, bool], dict]

_MISSING = object()


def _json_text(value: Any, what: str) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidArgumentError(f"{what} cannot be saved as JSON: {error}") from None


def _check_key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"attribute names are strings (JSON object keys), not {type(key).__name__}")
    return key


class Attributes(dict):
    """The user attributes of an array or group; see the module's description."""

    __slots__ = ("_saver", "_refusal")

    def __init__(self, attributes: dict, saver: Optional[Saver], refusal: str = "") -> None:
        super().__init__(attributes)
        self._saver = saver
        self._refusal = refusal

    @property
    def read_only(self) -> bool:
        return self._saver is None

    def asdict(self) -> dict:
        """The attributes as a plain dict (a shallow copy)."""
        return dict(self)

    def _save(self, set_json: str, remove: list, replace: bool) -> None:
        if self._saver is None:
            raise InvalidArgumentError(self._refusal or "these attributes are read-only")
        saved = self._saver(set_json, remove, replace)
        super().clear()
        super().update(saved)

    # -- changes, each saved at once ----------------------------------------------------------

    def __setitem__(self, key: str, value: Any) -> None:
        self._save(_json_text({_check_key(key): value}, f"attribute {key!r}"), [], False)

    def __delitem__(self, key: str) -> None:
        if self._saver is not None and key not in self:
            raise KeyError(key)
        self._save("{}", [_check_key(key)], False)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Sets several attributes in one save."""
        changes = dict(*args, **kwargs)
        for key in changes:
            _check_key(key)
        self._save(_json_text(changes, "attributes"), [], False)

    def __ior__(self, other: Any) -> "Attributes":  # type: ignore[override]
        self.update(other)
        return self

    def pop(self, key: str, default: Any = _MISSING) -> Any:  # type: ignore[override]
        if key not in self:
            if self._saver is None:
                self._save("{}", [], False)  # refused
            if default is _MISSING:
                raise KeyError(key)
            return default
        value = super().__getitem__(key)
        del self[key]
        return value

    def popitem(self) -> tuple:
        if not self:
            raise KeyError("popitem(): no attributes")
        key = next(reversed(self.keys()))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key in self:
            return super().__getitem__(key)
        self[key] = default
        return super().__getitem__(key)

    def put(self, attributes: dict) -> None:
        """Replaces all attributes with `attributes` (zarr-python's Attributes.put)."""
        if not isinstance(attributes, dict):
            raise InvalidArgumentError(f"attributes must be a dict, not {type(attributes).__name__}")
        for key in attributes:
            _check_key(key)
        self._save(_json_text(attributes, "attributes"), [], True)

    def clear(self) -> None:
        """Removes every attribute, in one save."""
        self.put({})

    def __reduce__(self):
        return (dict, (dict(self),))  # pickles and copies as the plain dict it shows
