"""``storage_options=``: how an HTTP(S) store is reached (headers, bearer token, concurrency,
retries), as fsspec-based readers take it.

The dict is checked here for its keys and types; the engine checks the values (header syntax,
token characters, ranges) and names the field, never a header's or token's text. Each key given
takes the place of its ``ZARRDIRECT_HTTP_*`` environment variable for that store. A local folder
ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _native
from ._errors import InvalidArgumentError

#: The keys ``storage_options`` accepts, and what each one is.
KEYS = {
    "headers": 'extra request headers: a dict {"Name": "value"} or a list of "Name: value" lines',
    "bearer_token": 'sent as "Authorization: Bearer <token>"',
    "concurrency": "requests in flight per read (1 to 1024)",
    "retries": "extra attempts after a 5xx, a reset or a timeout (0 to 100)",
}


def _header_lines(headers: Any) -> list[str]:
    if isinstance(headers, Mapping):
        lines = []
        for name, value in headers.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise InvalidArgumentError("storage_options['headers'] must map header names (str) to values (str)")
            # "Name: value" is split at its first colon: a colon in the name would send another
            # header than the one named ({"Authorization: Basic x": ""} sets Authorization).
            if ":" in name:
                raise InvalidArgumentError("storage_options['headers'] has a header name holding ':' (the name is "
                                           "not shown: it may hold a secret)")
            lines.append(f"{name}: {value}")
        return lines
    if isinstance(headers, (list, tuple)) and all(isinstance(line, str) for line in headers):
        return list(headers)
    raise InvalidArgumentError('storage_options[\'headers\'] must be a dict {"Name": "value"} or a list of '
                               f'"Name: value" strings, not {type(headers).__name__}')


def _count(options: Mapping, key: str) -> int:
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"storage_options[{key!r}] must be an integer, not {type(value).__name__}")
    if value < 0:
        raise InvalidArgumentError(f"storage_options[{key!r}] must not be negative, not {value}")
    return value


def native_store_options(storage_options: Mapping | None) -> "_native.StoreOptions":
    """The engine's StoreOptions for a ``storage_options`` dict (None: from the environment)."""
    native = _native.StoreOptions()
    if storage_options is None:
        return native
    if not isinstance(storage_options, Mapping):
        raise InvalidArgumentError(f"storage_options must be a dict, not {type(storage_options).__name__}")
    unknown = [key for key in storage_options if key not in KEYS]
    if unknown:
        raise InvalidArgumentError(f"storage_options has unknown key {unknown[0]!r}; accepted: {', '.join(KEYS)}")
    if "headers" in storage_options:
        native.http_headers = _header_lines(storage_options["headers"])
    if "bearer_token" in storage_options:
        token = storage_options["bearer_token"]
        if not isinstance(token, str):
            raise InvalidArgumentError(f"storage_options['bearer_token'] must be a str, not {type(token).__name__}")
        native.http_bearer_token = token
    if "concurrency" in storage_options:
        concurrency = _count(storage_options, "concurrency")
        if not 1 <= concurrency <= 1024:
            raise InvalidArgumentError(f"storage_options['concurrency'] must be from 1 to 1024, not {concurrency}")
        native.http_concurrency = concurrency
    if "retries" in storage_options:
        retries = _count(storage_options, "retries")
        if retries > 100:
            raise InvalidArgumentError(f"storage_options['retries'] must be from 0 to 100, not {retries}")
        native.http_retries = retries
    return native


def kept(storage_options: Mapping | None) -> dict | None:
    """A copy to keep on an open array or group (what it pickles with), so later changes to the
    caller's dict do not change how it reopens."""
    return None if storage_options is None else dict(storage_options)
