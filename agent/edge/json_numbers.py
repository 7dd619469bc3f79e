"""Integral numbers leave as JSON integers.

Data Parts, artifact and task metadata and card extension params travel as protobuf
``Struct``/``Value``, which holds every number as a double: ProtoJSON then writes ``1`` as
``1.0`` (``"minItems": 1.0``, ``"samples": 11.0``). JSON Schema accepts both, but a reader
decoding into an integer type (Go's ``encoding/json`` into an ``int``, any strict reader)
refuses ``1.0``. ``google.protobuf.Value.number_value`` is the only floating-point field of
the A2A wire types, so every float in an answer came from a ``Value``: one that is integral
and a safe integer (|n| <= 2^53, where the double is exactly that integer) is written as the
integer it is. Nothing else changes, and JCS digests cannot: JCS already prints ``1.0`` as 1.
"""

from __future__ import annotations

from typing import Any

MAX_SAFE_INTEGER = 2**53


def _integral(number: float) -> float | int:
    if number.is_integer() and -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        return int(number)
    return number


def integral_numbers(document: Any) -> Any:
    """``document`` (a decoded JSON value) with integral floats as ints; dicts and lists are
    changed in place (the serializer's own fresh output), and returned."""
    kind = type(document)
    if kind is float:
        return _integral(document)
    if kind is dict:
        for key, value in document.items():
            if type(value) in _CONTAINERS_AND_FLOAT:
                document[key] = integral_numbers(value)
    elif kind is list:
        for index, value in enumerate(document):
            if type(value) in _CONTAINERS_AND_FLOAT:
                document[index] = integral_numbers(value)
    return document


_CONTAINERS_AND_FLOAT = frozenset({dict, list, float})
