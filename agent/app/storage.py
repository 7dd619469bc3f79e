"""The storage builder: the process's runtime (registry, engine, keys, cards, audit) and the
database's life (migrated and prepared before anything runs, disposed of last)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from a2a.types import AgentExtension
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.app.assembly import AgentRuntime, Assembly, Life, running
from agent.base.settings import Settings
from agent.ports import Deployment
from agent.registry.cards import CardFactory
from agent.registry.loader import Registry, load_registry
from agent.security.auth import load_or_create_signing_key
from agent.security.card_signatures import JWKS_PATH, CardSigner
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import exclusively, make_engine
from agent.storage.reads import close_reader
from agent.storage.recovery import INTERRUPTED
from agent.storage.schema import at_heads
from agent.storage.schema import upgrade as upgrade_core
from agent.storage.task_store import UpsertDatabaseTaskStore

log = logging.getLogger(__name__)


def build_runtime(
    settings: Settings,
    deployment: Deployment,
    registry: Registry | None = None,
    extra_extensions: Iterable[AgentExtension] = (),
) -> AgentRuntime:
    """Load everything the app needs; raises on a bad registry before anything listens."""
    settings.home.mkdir(parents=True, exist_ok=True)
    registry = registry or load_registry(settings.skills_dir or deployment.skills_dir)
    tool_key = load_or_create_signing_key(settings.home)
    key = tool_key if settings.embedded_issuer else None
    engine = make_engine(settings.resolved_database_url)
    cards = CardFactory(
        registry,
        settings.resolved_public_url,
        extra_extensions,
        deployment.identity,
        grpc_url=settings.resolved_grpc_url,
        signer=CardSigner(tool_key, settings.resolved_public_url.rstrip("/") + JWKS_PATH),
    )
    return AgentRuntime(settings, registry, engine, key, cards, tool_key, DatabaseAuditLog(engine))


@runtime_checkable
class Initializable(Protocol):
    """A store whose tables are created on demand (the SDK's task table)."""

    async def initialize(self) -> None: ...


async def prepare_storage(
    settings: Settings,
    engine: AsyncEngine,
    deployment: Deployment,
    stores: Iterable[Initializable] = (),
) -> None:
    """Migrate the core's own tables, create the task tables, then let the deployment migrate
    (and seed) its own.

    Under one cluster-wide lock, so replicas starting together do this once, one at a time.
    A database that records every history at its head (a restart) is not handed to Alembic,
    which would find nothing to do after importing itself and reading every revision's script.
    """
    async with exclusively(engine, f"{deployment.identity.slug}:prepare-storage"):
        url = settings.resolved_database_url
        current = await at_heads(engine, deployment.histories())
        if not current:
            await upgrade_core(url)
        for store in stores:
            await store.initialize()
        if deployment.migrate is not None and not current:
            await deployment.migrate(settings, engine)
        if settings.seed_on_start and deployment.seed is not None:
            await deployment.seed(settings, engine)


def task_store(engine: AsyncEngine) -> UpsertDatabaseTaskStore:
    """The SDK's task table, read by the request handler (every write goes by the writer).

    The same table serves one process and several replicas: a task's settled states are
    written once each, whichever replica runs it (agent/server/request_handler.py).
    """
    return UpsertDatabaseTaskStore(engine, create_table=True)


def interrupted(assembly: Assembly) -> Life | None:
    """A single process's start ends what ran here before (it is dead); replicas leave it to
    their leases (agent/storage/recovery.py)."""
    settings, options = assembly.settings, assembly.options
    if not options.ends_interrupted or settings.cluster_stores:
        return None
    return running(lambda: end_interrupted(assembly.store, options.clock), None)


async def end_interrupted(
    store: UpsertDatabaseTaskStore, clock: Callable[[], datetime] | None
) -> None:
    """A single process's restart ends the tasks its previous run left running."""
    ended = await store.end_interrupted((clock or (lambda: datetime.now(UTC)))())
    if ended:
        log.warning("ended %d task(s) a previous run left running: %s", len(ended), INTERRUPTED)


def database(assembly: Assembly) -> Life:
    """The task table; its life: the database prepared (migrated, seeded) first, the engine
    and its reader closed last."""
    settings, engine = assembly.settings, assembly.runtime.engine
    store = assembly.store = task_store(engine)

    @asynccontextmanager
    async def life() -> AsyncIterator[None]:
        try:
            await prepare_storage(settings, engine, assembly.deployment, [store])
            yield
        finally:
            await close_reader(engine)
            await engine.dispose()

    return life
