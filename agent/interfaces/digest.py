"""Schema and document digests: SHA-256 over the RFC 8785 (JCS) form of a JSON value.

JCS works on IEEE-754 doubles, so an integer of magnitude >= 2**53 has no canonical form
(``rfc8785`` refuses it, JavaScript would round it). Project choice 11 (docs/schema-interfaces.md)
makes such a value an invalid interface, so it is refused here with the JSON Pointer of the
offending value, before hashing.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Final

import rfc8785

from agent.base.errors import SchemaInterfaceError
from agent.interfaces.pointer import json_pointer
from agent.interfaces.spec import DIGEST_PATTERN

__all__ = ["DIGEST_PATTERN", "NotRepresentableError", "canonical_json", "digest_of"]

DIGEST_PREFIX: Final = "sha256:"
_INT_LIMIT: Final = 2**53  # |n| >= this is refused (rfc8785 refuses exactly 2**53 too)


class NotRepresentableError(SchemaInterfaceError, ValueError):
    """The value has no RFC 8785 form; ``pointer`` locates the offending value."""

    def __init__(self, pointer: str, reason: str) -> None:
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"value at JSON Pointer {pointer!r} has no RFC 8785 form: {reason}")


def _check(value: Any, path: list[str | int]) -> None:
    """Walk the value with its path, so a refusal can say where (rfc8785 cannot)."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) >= _INT_LIMIT:
            raise NotRepresentableError(
                json_pointer(path), f"integer of magnitude >= 2^53 ({value})"
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise NotRepresentableError(json_pointer(path), f"non-finite number ({value})")
    elif isinstance(value, str):
        _check_text(value, path, "string")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check(item, [*path, index])
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotRepresentableError(
                    json_pointer(path), f"member name is {type(key).__name__}, not string"
                )
            _check_text(key, [*path, key], "member name")
            _check(item, [*path, key])
    else:
        raise NotRepresentableError(
            json_pointer(path), f"not a JSON value ({type(value).__name__})"
        )


def _check_text(text: str, path: list[str | int], what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotRepresentableError(
            json_pointer(path), f"{what} holds a lone surrogate (not UTF-8)"
        ) from None


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value (dict/list/str/int/float/bool/None)."""
    _check(value, [])
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:  # a case _check missed: still say so clearly
        raise NotRepresentableError("", str(exc)) from exc


def digest_of(value: Any) -> str:
    """``sha256:`` + 64 lowercase hex over ``canonical_json(value)``."""
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(value)).hexdigest()
