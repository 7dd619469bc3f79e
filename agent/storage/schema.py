"""The core's schema: its column type, its tables, and the Alembic histories that build them.

Tables: the core's own, on one ``MetaData``, which the stores (bindings, audit, the client's
correlations, leases, push) import and the core's Alembic environment (``migrations/`` beside
this module) targets, so autogenerate and the schema test compare the database with exactly
these definitions. The SDK's own task tables are not here: the SDK creates and migrates them.

Histories: the core (its tables), a deployment (its own tables) and the a2a-sdk keep separate
Alembic histories in one database, each with its own version table, so none needs to know the
others, and a fork that replaces the deployment keeps these tables. A :class:`MigrationHistory`
is one of them: its scripts folder and version table; ``upgrade`` and friends build the Alembic
``Config`` in code (no ini file, so it works from an installed wheel, the scripts shipping as
package data) and share one async connection with Alembic's synchronous API.
:func:`run_environment` is the whole body of such a history's ``env.py``. A history also names
its ``head``, the newest revision, as a constant: ``serve`` and the commands that read or write
the database compare it with the version table and run nothing of Alembic when they agree
(:func:`at_heads`). ``tests/storage/test_heads.py`` holds each history's ``head`` to what
Alembic computes from its scripts. ``CORE`` is the core's history, and ``upgrade``,
``downgrade``, ``current_revision``, ``head_revision``, ``alembic_config`` its operations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Column,
    Connection,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    column,
    inspect,
    select,
    table,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.types import TypeDecorator

from agent.base.errors import ConfigurationError
from agent.storage.engine import async_url, make_engine

if TYPE_CHECKING:
    from alembic.config import Config

_Action = Callable[["Config"], None]


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always returned timezone-aware.

    PostgreSQL keeps ``timestamptz``; SQLite has no time zones, so values are
    written as naive UTC text and re-tagged with UTC on the way out. Naive
    inputs are rejected: guessing their zone is how off-by-hours bugs start.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Normalise to UTC (naive UTC for SQLite so text comparisons stay ordered)."""
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected datetime, got {type(value).__name__}")
        if value.tzinfo is not UTC:  # fast path for the common case (bulk seeding)
            if value.tzinfo is None or value.utcoffset() is None:
                raise ValueError(f"naive datetime {value.isoformat()} rejected; use a tz-aware one")
            value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Return an aware UTC datetime whatever the backend handed back."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""The first deployment's convention: databases made while it migrated these tables keep
their names."""

metadata = MetaData(naming_convention=NAMING_CONVENTION)

task_binding = Table(
    "task_binding",
    metadata,
    Column("task_id", String(64), primary_key=True),
    Column("owner", String(255), nullable=False),
    Column("phase", String(16), nullable=False),
    Column("skill_id", String(64), nullable=True),
    Column("candidates", JSON, nullable=False),
    Column("arguments", JSON, nullable=False),
    Column("text", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

principal_audit = Table(
    "principal_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", UTCDateTime, nullable=False),
    Column("tenant", String(64)),
    Column("principal", String(255), nullable=False),
    Column("actor_chain", JSON, nullable=False),
    Column("skill_id", String(64)),
    Column("skill_version", String(16)),
    Column("interface_digest", String(80)),
    Column("task_id", String(64)),
    Column("tool", String(64), nullable=False),
    Column("operation", String(64), nullable=False),
    Column("resource_ids", JSON, nullable=False),
    Column("decision", String(8), nullable=False),
    Column("reason", String(255), nullable=False),
    Column("token_id", String(64)),
    Column("projection", String(8)),
    Index("ix_principal_audit_ts", "ts"),
    Index("ix_principal_audit_task", "task_id"),
    Index("ix_principal_audit_principal", "tenant", "principal", "ts"),
    Index("ix_principal_audit_skill", "skill_id", "ts"),
)
"""Append-only: the migrations add triggers that refuse updates and deletes."""

task_correlation = Table(
    "task_correlation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", UTCDateTime, nullable=False),
    Column("workflow_id", String(64), nullable=False),
    Column("upstream_agent", String(512), nullable=False),
    Column("upstream_endpoint", String(512), nullable=False),
    Column("upstream_task_id", String(64), nullable=False),
    Column("upstream_skill", String(64), nullable=False),
    Column("downstream_agent", String(512), nullable=False),
    Column("downstream_endpoint", String(512), nullable=False),
    Column("downstream_task_id", String(64), nullable=False),
    Column("downstream_skill", String(64), nullable=False),
    Index("ix_task_correlation_workflow", "workflow_id"),
    Index("ix_task_correlation_upstream", "upstream_task_id"),
    Index("ix_task_correlation_downstream", "downstream_task_id"),
)


replica_lease = Table(
    "replica_lease",
    metadata,
    Column("replica", String(64), primary_key=True),
    Column("started_at", UTCDateTime, nullable=False),
    Column("heartbeat_at", UTCDateTime, nullable=False),
    Index("ix_replica_lease_heartbeat_at", "heartbeat_at"),
)
"""One row per serving process sharing the database: its lease, renewed by a heartbeat."""

task_runner = Table(
    "task_runner",
    metadata,
    Column("task_id", String(64), primary_key=True),
    Column("replica", String(64), nullable=False),
    Column("owner", String(255), nullable=False),
    Column("principal", String(255), nullable=False),
    Column("tenant", String(64), nullable=True),
    Column("skill_id", String(64), nullable=True),
    Column("since", UTCDateTime, nullable=False),
    Index("ix_task_runner_replica", "replica"),
)
"""Which process runs a task whose id has reached a client before it settled.

Written with the task's first durable (accepted) state, deleted with its settled state, in
the same transaction; a survivor ends the tasks of a replica whose lease expired, and the
principal, tenant and skill here are what the audit row of such a task names.
"""
push_notification_configs = Table(
    "push_notification_configs",
    metadata,
    Column("task_id", String(36), primary_key=True),
    Column("config_id", String(255), primary_key=True),
    Column("config_data", LargeBinary, nullable=False),
    Column("owner", String(255), nullable=True),
    Column("protocol_version", String(16), nullable=True),
    Index("ix_push_notification_configs_owner", "owner"),
)
"""The a2a-sdk's push config table (``DatabasePushNotificationConfigStore`` reads and writes
it, as its model declares it), made here by a migration so that it exists before any replica
serves and the outbox's triggers can read it."""

push_outbox = Table(
    "push_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(36), nullable=False),
    Column("config_id", String(255), nullable=False),
    Column("owner", String(255), nullable=True),
    Column("status", JSON, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("due_at", UTCDateTime, nullable=True),
    Column("claimed_until", UTCDateTime, nullable=True),
    Index("ix_push_outbox_task_id", "task_id", "config_id"),
)
"""Notifications not yet delivered: one row per (config, task status) written by a trigger on
the task table in the transaction that changed the task (agent/push/outbox.py); deleted once
delivered or given up. ``due_at`` NULL: due now; ``claimed_until``: a replica is sending it."""

TABLES: tuple[str, ...] = tuple(metadata.tables)


class UnknownRevisionError(ConfigurationError):
    """The database records a revision this code does not ship: a newer version's database.

    Nothing was migrated; run the version that made it, or point this one at its own database.
    """

    def __init__(self, version_table: str, revisions: Iterable[str]) -> None:
        self.version_table = version_table
        self.revisions = tuple(revisions)
        named = ", ".join(repr(r) for r in self.revisions)
        super().__init__(
            f"the database records revision {named} in {version_table}, which this version "
            "does not know (a newer version's database?): nothing was migrated; use the "
            "version that made it, or another database"
        )


@dataclass(frozen=True)
class MigrationHistory:
    """A component's migrations: where its scripts are and which table records its revision."""

    scripts: Path
    version_table: str
    head: str | None = None
    """The newest revision, known without Alembic (None: a reader cannot tell the database is
    current, and runs the migrations)."""

    def config(self, url: str | None = None) -> Config:
        """Alembic configuration for this history, without an ini file."""
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(self.scripts))
        cfg.set_main_option("version_table", self.version_table)
        if url is not None:
            rendered = async_url(url).render_as_string(hide_password=False)
            cfg.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
        return cfg

    def head_revision(self) -> str:
        """The newest revision shipped with this history, as Alembic finds it in the scripts."""
        from alembic.script import ScriptDirectory

        head = ScriptDirectory.from_config(self.config()).get_current_head()
        if head is None:  # pragma: no cover - every history ships its first revision
            raise RuntimeError(f"no migrations found in {self.scripts}")
        return head

    async def upgrade(self, url: str, revision: str = "head") -> None:
        """``alembic upgrade <revision>`` (idempotent: a current database is left alone).

        Raises :class:`UnknownRevisionError`, migrating nothing, if the database records a
        revision these scripts do not have.
        """
        from alembic import command

        def upgrade(cfg: Config) -> None:
            self._refuse_unknown(cfg)
            command.upgrade(cfg, revision)

        await self._run(url, upgrade)

    async def downgrade(self, url: str, revision: str = "base") -> None:
        """``alembic downgrade <revision>``; for tests and rollbacks."""
        from alembic import command

        await self._run(url, lambda cfg: command.downgrade(cfg, revision))

    def _refuse_unknown(self, cfg: Config) -> None:
        """Alembic's own error for it is a CommandError naming only the revision."""
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        connection = cfg.attributes["connection"]
        context = MigrationContext.configure(connection, opts={"version_table": self.version_table})
        script = ScriptDirectory.from_config(cfg)
        known = {revision.revision for revision in script.walk_revisions()}
        unknown = [r for r in context.get_current_heads() if r not in known]
        if unknown:
            raise UnknownRevisionError(self.version_table, unknown)

    async def current_revision(self, url: str) -> str | None:
        """The revision recorded in the database, or None where this history never ran."""
        from alembic.runtime.migration import MigrationContext

        def read(connection: Connection) -> str | None:
            ctx = MigrationContext.configure(connection, opts={"version_table": self.version_table})
            return ctx.get_current_revision()

        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(read)
        finally:
            await engine.dispose()

    async def _run(self, url: str, action: _Action) -> None:
        """env.py takes the open connection from ``cfg.attributes`` instead of opening one."""
        cfg = self.config(url)
        engine = make_engine(url)

        def sync(connection: Connection) -> None:
            cfg.attributes["connection"] = connection
            action(cfg)

        try:
            async with engine.begin() as conn:
                await conn.run_sync(sync)
        finally:
            await engine.dispose()


def run_environment(context: Any, metadata: MetaData, version_table: str) -> None:
    """An ``env.py``: migrate ``metadata``'s tables only, on the caller's connection or our own.

    ``context`` is ``alembic.context``: a module proxying the running ``EnvironmentContext``
    (typed ``Any``, since mypy sees the module, not the context it stands for).

    ``MigrationHistory`` hands in an open connection; the Alembic CLI (``alembic -x url=...``)
    gets an async engine opened here. Tables of other components are ignored, so autogenerate
    compares this history's tables and nothing else.
    """
    config = context.config

    def include_name(name: str | None, type_: str, parent_names: object) -> bool:
        return name in metadata.tables if type_ == "table" else True

    def configure(**kwargs: Any) -> None:
        context.configure(
            target_metadata=metadata,
            version_table=config.get_main_option("version_table") or version_table,
            include_name=include_name,
            compare_type=True,
            **kwargs,
        )

    def url() -> str:
        given = context.get_x_argument(as_dictionary=True).get("url")
        found: str | None = given or config.get_main_option("sqlalchemy.url")
        if not found:
            raise RuntimeError("no database URL: use MigrationHistory.upgrade or alembic -x url=")
        return found

    def migrate(connection: Connection) -> None:
        configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
        with context.begin_transaction():
            context.run_migrations()

    async def migrate_async() -> None:
        engine = make_engine(url())
        try:
            async with engine.connect() as connection:
                await connection.run_sync(migrate)
                await connection.commit()
        finally:
            await engine.dispose()

    if context.is_offline_mode():
        configure(url=url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        migrate(connection)
    else:
        import asyncio  # here: the CLI's offline commands import this module for the heads

        asyncio.run(migrate_async())


VERSION_TABLE = "alembic_version_core"
HEAD = "core_0005"
"""The newest revision in ``migrations/versions/``: a new revision changes it too
(``tests/storage/test_heads.py`` fails otherwise)."""
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
CORE = MigrationHistory(MIGRATIONS_DIR, VERSION_TABLE, HEAD)

alembic_config = CORE.config
head_revision = CORE.head_revision
upgrade = CORE.upgrade
downgrade = CORE.downgrade
current_revision = CORE.current_revision


async def at_heads(engine: AsyncEngine, histories: Sequence[MigrationHistory] | None) -> bool:
    """Whether the database records every history at its head, and only there: nothing to
    migrate, so Alembic (its import and every revision's script) is not run. False for no
    histories given, a history without a known head, a version table missing, behind or
    ahead: the caller migrates, and the migrations decide (a newer version's database is
    refused by name there)."""
    if histories is None:
        return False
    async with engine.connect() as connection:
        return await connection.run_sync(_recorded_at_heads, histories)


def _recorded_at_heads(connection: Connection, histories: Sequence[MigrationHistory]) -> bool:
    inspector = inspect(connection)
    for history in histories:
        if history.head is None or not inspector.has_table(history.version_table):
            return False
        versions = table(history.version_table, column("version_num"))
        if set(connection.scalars(select(versions.c.version_num))) != {history.head}:
            return False
    return True
