"""Programmatic Alembic: bring the core's tables (bindings, audit, correlation) to their schema.

The core keeps its own history in ``migrations/`` beside this module, with its own version
table, so a deployment's migrations (each in ``alembic_version_<name>``) and the
a2a-sdk's live in the same database without knowing about each other, and a fork that replaces
the deployment keeps these tables. The ``Config`` is built in code, so no ini file is needed and
it works from an installed wheel (the scripts ship as package data).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Connection, column, inspect, select, table
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.history import MigrationHistory

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
