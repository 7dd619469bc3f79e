"""Programmatic Alembic: bring an inventory database to the current schema.

The Alembic ``Config`` is built in code and points at the ``migrations``
directory inside this package, so no ``alembic.ini`` is needed at runtime and
it works from an installed wheel. The version table is namespaced because the
core (``agent.storage.schema``, its tables) and the a2a-sdk task store keep their own Alembic
histories in the same database.
"""

from __future__ import annotations

from pathlib import Path

from agent.sdk import MigrationHistory

VERSION_TABLE = "alembic_version_inventory"
HEAD = "0004"
"""The newest revision in ``migrations/versions/``: a new revision changes it too
(``tests/storage/test_heads.py`` fails otherwise)."""
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
INVENTORY = MigrationHistory(MIGRATIONS_DIR, VERSION_TABLE, HEAD)

alembic_config = INVENTORY.config
head_revision = INVENTORY.head_revision
upgrade = INVENTORY.upgrade
downgrade = INVENTORY.downgrade
current_revision = INVENTORY.current_revision
