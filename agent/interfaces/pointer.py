"""RFC 6901 JSON Pointers: the one way this package names a location in a JSON value."""

from __future__ import annotations

from collections.abc import Iterable

MAX_SEGMENT_CHARS = 64
"""A member name longer than this is cut to its first 64 characters and ``ELLIPSIS`` in a
pointer into a caller's input (``bounded_pointer``): names are the caller's text."""
ELLIPSIS = "\u2026"
MAX_SEGMENTS = 64
"""Levels a pointer into a caller's input names; a deeper one ends in an ``ELLIPSIS`` segment."""


def _escape(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def json_pointer(parts: Iterable[str | int]) -> str:
    """Join member names and array indexes into a pointer (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return "".join("/" + _escape(part) for part in parts)


def bounded_pointer(parts: Iterable[str | int]) -> str:
    """A pointer into a caller's input, bounded in what it quotes back (docs/security.md).

    Each member name longer than ``MAX_SEGMENT_CHARS`` is cut there and marked with
    ``ELLIPSIS`` (escaped after cutting, so an escape is never split), and past
    ``MAX_SEGMENTS`` levels the pointer ends in one ``ELLIPSIS`` segment: at most
    64 x (2 x 64 + 2) characters, whatever the caller sent.
    """
    segments: list[str] = []
    for index, part in enumerate(parts):
        if index == MAX_SEGMENTS:
            segments.append(ELLIPSIS)
            break
        text = str(part)
        if len(text) > MAX_SEGMENT_CHARS:
            text = text[:MAX_SEGMENT_CHARS] + ELLIPSIS
        segments.append(_escape(text))
    return "".join("/" + segment for segment in segments)
