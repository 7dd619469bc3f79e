"""A read-only operator console at /console, served by the agent itself (docs/console.md).

Generic: it shows cards, interface documents, tasks and the audit trail of any registry; the
topology page comes from the deployment (:class:`~agent.ports.TopologyView`: a
:class:`~agent.console.topology.TopologySource` and the page's words).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agent.console.session import API_PREFIX as CONSOLE_API_PREFIX
from agent.console.session import PREFIX
from agent.registry.identity import AgentIdentity

if TYPE_CHECKING:
    from fastapi import FastAPI

    from agent.console.topology import TopologyView

__all__ = ["CONSOLE_API_PREFIX", "PREFIX", "mount_console"]


def mount_console(
    app: FastAPI,
    runtime: Any,
    *,
    topology: TopologyView | None = None,
    clock: Callable[[], datetime] | None = None,
    identity: AgentIdentity | None = None,
) -> None:
    """Mount the console and its session middleware; its pages carry the deployment's brand.

    Call it after the edge's ``BearerAuthMiddleware`` is added, so the session middleware ends
    up outside it and hands it the cookie's token to verify; the landing middleware (``/``,
    ``/docs/``, ``/console`` without its slash) goes outside both.
    """
    # Imported here: the package is also the way to agent.console.topology, which skills'
    # topologies import through agent.sdk without the console's web stack (FastAPI, Jinja2).
    from starlette.applications import Starlette

    from agent.console.landing import LandingMiddleware, find_docs
    from agent.console.routes import Console
    from agent.console.session import ConsoleSessionMiddleware
    from agent.security.principal import ANONYMOUS

    console = Console(
        runtime.registry,
        runtime.cards,
        runtime.audit,
        topology.source(runtime.engine) if topology is not None else None,
        clock or (lambda: datetime.now(UTC)),
        runtime.settings.limits,
        view=topology,
        pages=[(page, page.source(runtime.engine)) for page in topology.pages] if topology else (),
    )
    identity = identity or AgentIdentity()
    console.templates.env.globals["brand"] = identity.slug
    app.mount(PREFIX, Starlette(routes=console.routes()))
    app.add_middleware(ConsoleSessionMiddleware)
    docs = find_docs()
    card = runtime.cards.public_card
    page = console.templates.get_template("landing.html").render(
        name=card.name,
        description=card.description,
        command=identity.command,
        card_path="/.well-known/agent-card.json",
        docs=[(path, _title(body, path)) for path, body in docs.items()],
        prefix=PREFIX,
        principal=ANONYMOUS,
        scopes=[],
        view="landing",
    )
    app.add_middleware(LandingMiddleware, page=page.encode(), docs=docs)


def _title(markdown: bytes, path: str) -> str:
    """A document's first heading, else its file name."""
    for line in markdown.decode("utf-8", "replace").splitlines():
        if line.startswith("# "):
            return f"{line[2:].strip()} ({path.rsplit('/', 1)[-1]})"
    return path.rsplit("/", 1)[-1]
