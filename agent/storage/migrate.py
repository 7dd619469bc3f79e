"""Programmatic Alembic: bring the core's tables (bindings, audit, correlation) to their schema.

The core keeps its own history in ``migrations/`` beside this module, with its own version
table, so a deployment's migrations (the inventory's, ``alembic_version_inventory``) and the
a2a-sdk's live in the same database without knowing about each other, and a fork that replaces
the deployment keeps these tables. The ``Config`` is built in code, so no ini file is needed and
it works from an installed wheel (the scripts ship as package data).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from agent.storage.engine import async_url, make_engine

VERSION_TABLE = "alembic_version_core"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

_Action = Callable[[Config], None]


def alembic_config(url: str | None = None) -> Config:
    """Alembic configuration for the core's migrations, without an ini file."""
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
    if head is None:  # pragma: no cover - the package always ships core_0001
        raise RuntimeError(f"no migrations found in {MIGRATIONS_DIR}")
    return head


async def upgrade(url: str, revision: str = "head") -> None:
    """Run ``alembic upgrade <revision>`` (idempotent: a current database is left alone)."""
    await _run(url, lambda cfg: command.upgrade(cfg, revision))


async def downgrade(url: str, revision: str = "base") -> None:
    """Run ``alembic downgrade <revision>``; for tests and rollbacks (base drops the tables)."""
    await _run(url, lambda cfg: command.downgrade(cfg, revision))


async def current_revision(url: str) -> str | None:
    """Revision recorded in the database, or None if the core was never migrated there."""

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
    """One async connection shared with Alembic's synchronous command API (env.py takes it
    from ``cfg.attributes`` instead of opening its own)."""
    cfg = alembic_config(url)
    engine = make_engine(url)

    def sync(connection: Connection) -> None:
        cfg.attributes["connection"] = connection
        action(cfg)

    try:
        async with engine.begin() as conn:
            await conn.run_sync(sync)
    finally:
        await engine.dispose()
