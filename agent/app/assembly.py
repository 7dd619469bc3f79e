"""What ``create_app``'s builders share, and the lifespan that runs what they start.

A builder is a function of the :class:`Assembly`: it builds its part when the app is created
(objects, routes, middleware), records what later builders need on the assembly, and returns
the part's life in the lifespan (an async context manager: started on entry, stopped on exit),
or None for a part with nothing running. The lifespan enters the lives on one
``contextlib.AsyncExitStack`` in the builders' order, so teardown is set-up reversed by
construction, and a start that fails stops what had started before it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.base.settings import Settings
    from agent.observability.metrics import TaskObserver
    from agent.ports import Deployment
    from agent.push.service import PushNotifications
    from agent.registry.cards import CardFactory
    from agent.registry.loader import Registry
    from agent.routing.router import Router
    from agent.security.auth import SigningKey, TokenVerifier
    from agent.server.request_handler import GovernedRequestHandler
    from agent.server.skill_context import ToolFactory
    from agent.storage.audit import AuditLog
    from agent.storage.task_store import UpsertDatabaseTaskStore

Life = Callable[[], AbstractAsyncContextManager[None]]
"""A part's life in the lifespan: entered once the app starts, left as it stops."""


@dataclass
class AgentRuntime:
    """The pieces one process shares between requests; exposed for the CLI and tests."""

    settings: Settings
    registry: Registry
    engine: AsyncEngine
    signing_key: SigningKey | None
    cards: CardFactory
    tool_key: SigningKey
    audit: AuditLog


@dataclass(frozen=True)
class Options:
    """``create_app``'s keyword options (documented there)."""

    clock: Callable[[], datetime] | None = None
    tools: Callable[[ToolFactory], ToolFactory] | None = None
    tracer_provider: Any | None = None
    grpc_shared_port: bool = False
    ends_interrupted: bool = True


@dataclass
class Assembly:
    """The app being built: its inputs, and each part a builder made for the builders after
    it (set by the builder that makes it; reading one before then raises AttributeError)."""

    settings: Settings
    deployment: Deployment
    options: Options
    runtime: AgentRuntime
    app: FastAPI
    observer: TaskObserver = field(init=False)
    verifier: TokenVerifier = field(init=False)
    tools: ToolFactory = field(init=False)
    store: UpsertDatabaseTaskStore = field(init=False)
    push: PushNotifications = field(init=False)
    router: Router = field(init=False)
    handler: GovernedRequestHandler = field(init=False)

    def anonymous_skill(self, skill_id: str) -> bool:
        """Whether a caller without a token may use ``skill_id`` (the edge's and gRPC's rule)."""
        from agent.registry.policy import entitled
        from agent.security.principal import ANONYMOUS

        capability = self.runtime.registry.get(skill_id)
        return capability is not None and entitled(capability.manifest, ANONYMOUS)

    @property
    def declared_extensions(self) -> list[Any]:
        """The A2A extensions the public card declares."""
        return list(self.runtime.cards.public_card.capabilities.extensions)


Builder = Callable[[Assembly], Life | None]


def running(
    start: Callable[[], Awaitable[object] | object] | None,
    stop: Callable[[], Awaitable[object] | object] | None,
) -> Life:
    """The life of a part with a ``start`` and a ``stop`` (either may be sync or async, or
    None)."""

    @asynccontextmanager
    async def life() -> AsyncIterator[None]:
        if start is not None:
            await _done(start())
        try:
            yield
        finally:
            if stop is not None:
                await _done(stop())

    return life


async def _done(result: Awaitable[object] | object) -> None:
    if isinstance(result, Awaitable):
        await result


def lives_in_order(*lives: Life | None) -> Life:
    """One life of several, entered in order and left in reverse (a builder's parts)."""

    @asynccontextmanager
    async def life() -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for each in lives:
                if each is not None:
                    await stack.enter_async_context(each())
            yield

    return life


def lifespan(lives: Sequence[Life]) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The app's lifespan: ``lives`` entered in order on one exit stack, left in reverse.
    ``lives`` is read when the app starts, so it may be filled after the app is made."""

    def span(_: FastAPI) -> AbstractAsyncContextManager[None]:
        return lives_in_order(*lives)()

    return span
