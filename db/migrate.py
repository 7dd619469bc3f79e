"""Programmatic Alembic: bring an inventory database to the current schema.

The Alembic ``Config`` is built in code and points at the ``migrations``
directory inside this package, so no ``alembic.ini`` is needed at runtime and
it works from an installed wheel. The version table is namespaced because the
core (``agent.storage.migrate``, its tables) and the a2a-sdk task store keep their own Alembic
histories in the same database.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from agent.sdk import async_url, make_engine

VERSION_TABLE = "alembic_version_inventory"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

_Action = Callable[[Config], None]


def alembic_config(url: str | None = None) -> Config:
    """Alembic configuration for the inventory migrations, without an ini file."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("version_table", VERSION_TABLE)
    if url is not None:
        rendered = async_url(url).render_as_string(hide_password=False)
        cfg.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return cfg


def head_revision() -> str:
    """The newest revision shipped with this package."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships 0001
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


async def upgrade(url: str, revision: str = "head") -> None:
    """Run ``alembic upgrade <revision>`` (idempotent: a current DB is left alone)."""
    await _run(url, lambda cfg: command.upgrade(cfg, revision))


async def downgrade(url: str, revision: str = "base") -> None:
    """Run ``alembic downgrade <revision>``; mainly for tests and rollbacks."""
    await _run(url, lambda cfg: command.downgrade(cfg, revision))


async def current_revision(url: str) -> str | None:
    """Revision recorded in the database, or None if never migrated."""

    def read(connection: Connection) -> str | None:
        ctx = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        return ctx.get_current_revision()

    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(read)
    finally:
        await engine.dispose()


async def _run(url: str, action: _Action) -> None:
    """Share one async connection with Alembic's synchronous command API."""
    cfg = alembic_config(url)
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await _run_on(conn, cfg, action)
    finally:
        await engine.dispose()


async def _run_on(conn: AsyncConnection, cfg: Config, action: _Action) -> None:
    """env.py picks the connection up from ``cfg.attributes`` instead of opening its own."""

    def sync(connection: Connection) -> None:
        cfg.attributes["connection"] = connection
        action(cfg)

    await conn.run_sync(sync)
