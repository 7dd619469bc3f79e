"""Remembered token verifications: the same signed bytes need their signature checked once.

A caller sends the same bearer token on every request, and an invocation presents one tool
token on each of its tool calls; re-checking an ECDSA signature each time is the largest
fixed cost of a call after the database. The cache keys on the whole token (signature
included), so a hit is the very token that was verified, and keeps the result only until the
token's ``exp``: after that the verifier runs again and refuses it. Bounded: the oldest entry
goes first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
DEFAULT_SIZE = 1024


class VerifiedTokens(Generic[T]):
    """Calls ``verify`` (which returns its result and the token's expiry) once per token."""

    def __init__(
        self,
        verify: Callable[[str], tuple[T, float | None]],
        *,
        size: int = DEFAULT_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._verify = verify
        self._size = size
        self._clock = clock
        self._known: dict[str, tuple[T, float]] = {}

    def __call__(self, token: str) -> T:
        """The verified result for ``token``; raises whatever ``verify`` raises."""
        known = self._known.get(token)
        if known is not None:
            if self._clock() < known[1]:
                return known[0]
            del self._known[token]
        result, expires = self._verify(token)
        if expires is not None:
            if len(self._known) >= self._size:
                del self._known[next(iter(self._known))]  # the oldest
            self._known[token] = (result, expires)
        return result

    def __len__(self) -> int:
        return len(self._known)
