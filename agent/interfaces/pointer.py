"""RFC 6901 JSON Pointers: the one way this package names a location in a JSON value."""

from __future__ import annotations

from collections.abc import Iterable


def json_pointer(parts: Iterable[str | int]) -> str:
    """Join member names and array indexes into a pointer (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)
