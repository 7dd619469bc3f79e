"""One Alembic history of its own per component, run programmatically in a shared database.

The core (its tables), a deployment (its own tables) and the a2a-sdk keep separate histories in
one database, each with its own version table, so none needs to know the others. A
:class:`MigrationHistory` is one of them: its scripts folder and version table; ``upgrade`` and
friends build the Alembic ``Config`` in code (no ini file, so it works from an installed wheel)
and share one async connection with Alembic's synchronous API. :func:`run_environment` is the
whole body of such a history's ``env.py``.

A history also names its ``head``, the newest revision, as a constant: ``serve`` and the
commands that read or write the database compare it with the version table and run nothing of
Alembic when they agree (``agent.storage.migrate.at_heads``). ``tests/storage/test_heads.py``
holds each history's ``head`` to what Alembic computes from its scripts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.base.errors import ConfigurationError

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Connection, MetaData

_Action = Callable[["Config"], None]


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

        from agent.storage.engine import async_url

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

        from agent.storage.engine import make_engine

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
        from agent.storage.engine import make_engine

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
    from agent.storage.engine import make_engine

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
