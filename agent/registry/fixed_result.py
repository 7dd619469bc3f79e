"""A handler's answer that is the same on every call, named so it is checked and converted once.

``describe_skill`` answers with a skill's frozen interface document: the same bytes for every
caller allowed to see it. Returning a ``FixedResult`` instead of a dict tells the executor so:
it builds the data, checks it against the output schema and turns it into its Data Part the
first time a ``key`` is seen, and reuses that Part afterwards (agent/server/result_parts.py),
instead of walking the whole document into a protobuf Struct on every call. Authorization is
unaffected: ``authorize`` and ``handle`` still run per request, only the answer is reused.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class FixedResult:
    """``build()`` returns the result; equal ``key`` (for one skill interface) means equal data.

    ``build`` is called when the executor meets ``key`` for the first time (and for a text
    rendering), so what it builds must depend on nothing but ``key``.
    """

    key: Hashable
    build: Callable[[], dict[str, Any]]
