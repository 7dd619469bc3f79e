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


def at_heads(url: str, histories: Sequence[MigrationHistory] | None) -> bool:
    """Whether the database at ``url`` is a SQLite file recording every history at its head,
    read with sqlite3 alone (no Alembic, no SQLAlchemy). False for anything else: no such
    file, another database, a history behind, ahead or without a known head (the caller
    migrates, and the migrations decide)."""
    from agent.errors import ConfigurationError
    from agent.storage.sqlite_file import reading, sqlite_path

    path = sqlite_path(url)
    if histories is None or path is None or not path.exists():
        return False
    try:
        with reading(path) as database:
            return database.at_heads(histories)
    except ConfigurationError:  # unreadable as a file: the migrations say why
        return False
