"""Exchanged tool tokens reused while fresh: one exchange per caller token, skill and tool.

Exchanging the caller's token anew for every invocation of a skill would cost each call an
ES256 signature here and a verification at the tool. A tool token's grant depends only on what
goes into the exchange (the caller's exact token, the tool and its audience, the downscoped
scopes, the grant's context), so the same token serves every invocation with that grant until
shortly before it expires. The key holds all of it: a token is never handed to another caller,
nor to a grant with other scopes or context. The tool sees the same ``jti`` on each reuse, so
the audit still names the principal and the token used.

Bounded (least recently used goes first); a refused exchange is not remembered; concurrent
calls with one key share one exchange, which finishes even if the call that started it is
cancelled.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from agent.security.credentials import IssuedToken, TokenExchanger, ToolGrant

DEFAULT_SIZE = 10_000
MIN_MARGIN_SECONDS = 30.0
MARGIN_FRACTION = 0.1
"""A token is reused until max(30 s, 10 % of its lifetime) before it expires: enough for the
invocation that gets it to finish its tool calls, and for clocks that disagree a little."""

_Key = tuple[Hashable, ...]


def reuse_seconds(expires_in: float) -> float:
    """How long after receipt a token of this lifetime is handed out again (0: never)."""
    return max(0.0, expires_in - max(MIN_MARGIN_SECONDS, MARGIN_FRACTION * expires_in))


def grant_key(grant: ToolGrant) -> _Key:
    """Everything the exchange reads from ``grant``: equal keys get equal tokens."""
    return (
        grant.principal.token,
        grant.tool,
        grant.target,
        grant.scopes,
        frozenset(grant.context.items()),
    )


class CachingTokenExchanger:
    """A TokenExchanger that remembers what ``exchanger`` issued, per grant, while fresh."""

    def __init__(
        self,
        exchanger: TokenExchanger,
        *,
        size: int = DEFAULT_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._exchanger = exchanger
        self._size = size
        self._clock = clock
        self._held: OrderedDict[_Key, tuple[IssuedToken, float]] = OrderedDict()
        self._pending: dict[_Key, asyncio.Task[IssuedToken]] = {}

    async def exchange(self, grant: ToolGrant) -> IssuedToken:
        """A fresh token held for this grant, or the one a single new exchange issues."""
        if not grant.principal.token:  # nothing to key on; the exchanger refuses it
            return await self._exchanger.exchange(grant)
        key = grant_key(grant)
        held = self._held.get(key)
        if held is not None:
            if self._clock() < held[1]:
                self._held.move_to_end(key)
                return held[0]
            del self._held[key]
        pending = self._pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._exchange(key, grant))
            self._pending[key] = pending
            # Done however it ends, even cancelled before it ran: the next call starts anew.
            pending.add_done_callback(lambda done: self._forget(key, done))
        # Shielded: a cancelled caller leaves the exchange running for the others waiting on it.
        return await asyncio.shield(pending)

    def _forget(self, key: _Key, done: asyncio.Task[IssuedToken]) -> None:
        if self._pending.get(key) is done:
            del self._pending[key]

    async def _exchange(self, key: _Key, grant: ToolGrant) -> IssuedToken:
        issued = await self._exchanger.exchange(grant)  # a refusal propagates, unremembered
        fresh_for = reuse_seconds(issued.expires_in)
        if fresh_for > 0:
            self._held[key] = (issued, self._clock() + fresh_for)
            while len(self._held) > self._size:
                self._held.popitem(last=False)
        return issued

    def __len__(self) -> int:
        return len(self._held)
