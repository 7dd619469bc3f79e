"""A read-only operator console at /console, served by the agent itself (docs/console.md).

Generic: it shows cards, interface documents, tasks and the audit trail of any registry; the
network view comes from a domain :class:`~agent.console.topology.TopologySource` passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette

from agent.console.routes import Console
from agent.console.session import API_PREFIX as CONSOLE_API_PREFIX
from agent.console.session import PREFIX, ConsoleSessionMiddleware
from agent.console.topology import TopologySource

__all__ = ["CONSOLE_API_PREFIX", "PREFIX", "mount_console"]


def mount_console(
    app: FastAPI,
    runtime: Any,
    *,
    topology: TopologySource | None = None,
    clock: Callable[[], datetime] | None = None,
) -> None:
    """Mount the console and its session middleware.

    Call it after the edge's ``BearerAuthMiddleware`` is added, so the session middleware ends
    up outside it and hands it the cookie's token to verify.
    """
    console = Console(
        runtime.registry,
        runtime.cards,
        runtime.audit,
        topology,
        clock or (lambda: datetime.now(UTC)),
        runtime.settings.limits,
    )
    app.mount(PREFIX, Starlette(routes=console.routes()))
    app.add_middleware(ConsoleSessionMiddleware)
