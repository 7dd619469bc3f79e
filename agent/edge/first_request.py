"""Work that waits until the app serves: begun by the first HTTP request, or after a delay.

A restart's way to its first served card is the application's own (imports, registry, cards,
routes, storage); the classifier's training, the MCP SDK's import and the start-up collection
of garbage are not on it, and on a small machine they would compete with it for the
interpreter (one thread runs Python at a time): begun in the lifespan, they slowed uvicorn's
start and the first request by a few tenths of a second. So the lifespan arms a
:class:`WarmUp`, and :class:`FirstRequestMiddleware`, outermost, fires it when the first HTTP
request arrives (the listener is up, then): the background work begins while that request is
served. If no request comes, it begins ``delay`` seconds after the lifespan armed it, so an
agent nobody has called yet is trained all the same.

Nothing waits for it wrongly: a text request that needs the classifier first trains what it
needs (``Router.route_async``), an MCP request waits for the endpoint's build
(``agent/mcp/endpoint.py``), and ``/healthz`` says ``classifier: training`` until it is done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

WARM_UP_DELAY_SECONDS: Final = 1.0
"""When the background work begins if no request has come first (from the lifespan's arming)."""


class WarmUp:
    """One piece of background work, begun once: by :meth:`fire`, or when the delay is up."""

    def __init__(self, delay: float = WARM_UP_DELAY_SECONDS) -> None:
        self._delay = delay
        self._begin: Callable[[], None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def armed(self) -> bool:
        """Whether there is work that has not begun yet."""
        return self._begin is not None

    def arm(self, begin: Callable[[], None]) -> None:
        """Begin ``begin`` (on this event loop) at :meth:`fire`, at the latest after the delay."""
        self.disarm()
        self._begin = begin
        self._timer = asyncio.get_running_loop().call_later(self._delay, self.fire)

    def fire(self) -> None:
        """Begin the work now, if it has not begun (on the event loop's thread)."""
        begin = self._begin
        self.disarm()
        if begin is not None:
            begin()

    def disarm(self) -> None:
        """Forget work that has not begun (the lifespan ends)."""
        self._begin = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class FirstRequestMiddleware:
    """Fires the warm-up when an HTTP request arrives and it has not begun (pure ASGI)."""

    def __init__(self, app: ASGIApp, warm_up: WarmUp) -> None:
        self.app = app
        self._warm_up = warm_up

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, after beginning the warm-up if it is the first."""
        if self._warm_up.armed and scope["type"] == "http":
            self._warm_up.fire()
        await self.app(scope, receive, send)
