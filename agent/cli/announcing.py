"""uvicorn's server, saying where the agent is once it listens.

``netagent serve`` prints the demo tokens and the console's address for a person to copy. Printed
before uvicorn starts, they scroll away under the start-up lines and name a server that does
not answer yet (the first start migrates, seeds and trains for seconds). uvicorn's ``startup``
runs the application's lifespan and then binds the socket; when it returns with ``started``
set, the agent answers, and that is when to say so.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn


class AnnouncingServer(uvicorn.Server):
    """A ``uvicorn.Server`` that calls ``announce`` once it listens."""

    def __init__(self, config: uvicorn.Config, announce: Callable[[], None]) -> None:
        super().__init__(config)
        self.announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up (lifespan, then bind); then the announcement, if it started."""
        await super().startup(sockets)
        if self.started:
            self.announce()
