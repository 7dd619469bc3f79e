"""Assemble the FastAPI application from small builders: observability, storage, security,
tasks, services, transports, routing, MCP, and the middleware around them.

Everything expensive (registry, digests, validators, cards, keys) happens once here, before
the first request. The domain (skills folder, tools, topology, its own tables, services) comes
in as a :class:`~agent.ports.Deployment`; nothing here knows which domain it is. Each builder
(agent/app/assembly.py) builds its part when the app is made and hands back its life in the
lifespan; the lifespan enters the lives in :data:`BUILDERS`' order on one exit stack, so the
app stops in exactly the reverse order: MCP, gRPC, the services, the relay, the sweeper, the
handler, the writer, the lease, the token exchange, the database, the spans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from a2a.types import AgentExtension
from fastapi import FastAPI

from agent._sdk import parse_requests_fast, serialize_integral_numbers, stream_events_lean
from agent.app import edge, security, storage, tasks, transports
from agent.app.assembly import AgentRuntime, Assembly, Builder, Life, Options, lifespan
from agent.app.security import gated_tools
from agent.app.storage import build_runtime, prepare_storage, task_store
from agent.base.settings import Settings
from agent.ports import Deployment
from agent.registry.loader import Registry
from agent.server.skill_context import ToolFactory

__all__ = ["AgentRuntime", "create_app", "gated_tools", "prepare_storage", "task_store"]

BUILDERS: tuple[Builder, ...] = (
    tasks.observability,  # first up, last down: the spans flushed after everything else
    storage.database,
    tasks.notifications,  # its triggers before anything changes a task
    storage.interrupted,
    security.credentials,
    tasks.handling,
    tasks.services,
    transports.bindings,
    tasks.routing,
    transports.mcp,
    edge.guards,  # the middleware, innermost first
    edge.console,
    edge.bounds,
)
"""The app's parts in set-up order; teardown is the reverse."""


def create_app(
    settings: Settings,
    deployment: Deployment,
    *,
    registry: Registry | None = None,
    clock: Callable[[], datetime] | None = None,
    tools: Callable[[ToolFactory], ToolFactory] | None = None,
    extra_extensions: Iterable[AgentExtension] = (),
    tracer_provider: Any | None = None,
    grpc_shared_port: bool = False,
    ends_interrupted: bool = True,
) -> FastAPI:
    """The ASGI app for one agent process.

    ``tools`` wraps the real tool factory (a seam, as httpx's transport is for HTTP: tests use
    it to slow a tool down); ``extra_extensions`` declares further A2A extensions on the card,
    e.g. a required one; ``tracer_provider`` is where skill spans go with ``settings.otel``
    (default: the global one, built from OTEL_* if there is none); ``grpc_shared_port`` lets
    the workers of ``serve --workers`` share the gRPC port, as they share uvicorn's;
    ``ends_interrupted`` False for a process that is not the one serving the database
    (``netagent mcp`` beside ``serve``): on a single-process database start-up otherwise ends
    every running task, and those would be the serving process's live ones.
    """
    serialize_integral_numbers()  # before any card or answer is rendered
    parse_requests_fast()
    stream_events_lean()
    runtime = build_runtime(settings, deployment, registry, extra_extensions)
    lives: list[Life] = []
    app = FastAPI(
        title=deployment.identity.slug, lifespan=lifespan(lives), docs_url=None, redoc_url=None
    )
    app.state.runtime = runtime
    options = Options(clock, tools, tracer_provider, grpc_shared_port, ends_interrupted)
    assembly = Assembly(settings, deployment, options, runtime, app)
    for build in BUILDERS:
        life = build(assembly)
        if life is not None:
            lives.append(life)
    return app
