"""Scope strings as RFC 6749 §3.3 spells them: scope-tokens separated by U+0020 alone.

    scope       = scope-token *( SP scope-token )
    scope-token = 1*( %x21 / %x23-5B / %x5D-7E )

Only the ASCII space separates. Every other character, including every other Unicode
whitespace (TAB, LF, U+0085, NBSP, U+2003, U+3000, ...), is part of the token it stands in:
the claim ``"reports.read\\u00a0reports.plan"`` is one scope, which no manifest declares
(their scopes are ASCII: agent/_schemas/capability-manifest.schema.json), so it grants
nothing. ``str.split()`` without an argument splits on all of them and would read two.
"""

from __future__ import annotations

import re

SCOPE_SEPARATOR = " "
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


def scope_tokens(text: str) -> frozenset[str]:
    """The scopes a ``scope`` claim or parameter holds: split on U+0020 only.

    Repeated, leading or trailing spaces separate nothing; whatever else a piece holds stays
    in it, so a piece that is no scope-token is one scope that matches no declared scope.
    """
    return frozenset(piece for piece in text.split(SCOPE_SEPARATOR) if piece)


def is_scope_token(text: str) -> bool:
    """Whether ``text`` is one RFC 6749 scope-token (printable ASCII but space, ``"``, ``\\``)."""
    return _SCOPE_TOKEN.fullmatch(text) is not None
