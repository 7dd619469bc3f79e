"""Each history's ``head`` constant is what Alembic computes from its scripts, and a database
that records a revision the scripts do not have is refused by name, with nothing migrated.

The read-only commands (``netagent audit``, ``usage``, ``chain list``) trust the constant to
tell a current database from one to migrate without importing Alembic: a new revision that
forgot to move it would have them read a schema they were not written for.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from agent.errors import ConfigurationError
from agent.storage import migrate as core
from agent.storage.history import MigrationHistory, UnknownRevisionError
from db import migrate as inventory
from tests.storage.conftest import NewDatabase

HISTORIES = {"core": core.CORE, "inventory": inventory.INVENTORY}


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_the_head_constant_is_the_one_head_alembic_finds(name: str) -> None:
    history = HISTORIES[name]
    script = ScriptDirectory.from_config(history.config())
    assert script.get_heads() == [history.head]  # one head: no branch left unmerged
    assert history.head == history.head_revision()


def test_the_module_constants_are_the_histories_heads() -> None:
    assert (core.CORE.head, inventory.INVENTORY.head) == (core.HEAD, inventory.HEAD)


def test_a_history_without_a_head_constant_is_still_a_history() -> None:
    """A fork's history made before ``head`` existed keeps working (readers then migrate)."""
    history = MigrationHistory(core.MIGRATIONS_DIR, core.VERSION_TABLE)
    assert history.head is None
    assert history.head_revision() == core.HEAD


def test_importing_the_histories_imports_no_alembic_nor_sqlalchemy() -> None:
    code = (
        "import sys, agent.storage.migrate, db.migrate\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'alembic', 'sqlalchemy'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", sorted(HISTORIES))
async def test_a_revision_from_the_future_is_refused_by_name(
    new_database: NewDatabase, name: str
) -> None:
    history = HISTORIES[name]
    url = new_database("future")
    await history.upgrade(url)
    await _record(url, history.version_table, "9999_from_the_future")
    with pytest.raises(UnknownRevisionError) as raised:
        await history.upgrade(url)
    assert isinstance(raised.value, ConfigurationError)
    assert raised.value.revisions == ("9999_from_the_future",)
    assert history.version_table in str(raised.value)
    assert "'9999_from_the_future'" in str(raised.value)
    assert await history.current_revision(url) == "9999_from_the_future"  # left as it was


async def _record(url: str, version_table: str, revision: str) -> None:
    """Overwrite the recorded revision, as a newer version's migration would have left it."""
    if url.startswith("sqlite"):
        with sqlite3.connect(url.partition(":///")[2]) as connection:
            connection.execute(f"UPDATE {version_table} SET version_num = ?", (revision,))
        return
    from sqlalchemy import text

    from agent.storage.engine import make_engine

    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(f"UPDATE {version_table} SET version_num = :revision"),
                {"revision": revision},
            )
    finally:
        await engine.dispose()
