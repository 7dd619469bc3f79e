"""Each history's ``head`` constant is what Alembic computes from its scripts, and a database
that records a revision the scripts do not have is refused by name, with nothing migrated.

``serve`` and the commands that read or write the database (``netagent audit``, ``usage``,
``chain``) trust the constant to tell a current database from one to migrate without running
Alembic: a new revision that forgot to move it would have them use a schema they were not
written for.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy.exc import DatabaseError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent import app
from agent.base.errors import ConfigurationError
from agent.base.settings import Settings
from agent.storage import schema as core
from agent.storage.engine import make_engine
from agent.storage.schema import MigrationHistory, UnknownRevisionError, at_heads
from db import migrate as inventory
from netops.deployment import network_deployment
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

    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(f"UPDATE {version_table} SET version_num = :revision"),
                {"revision": revision},
            )
    finally:
        await engine.dispose()


# -- serve's start-up: a current SQLite file is not handed to Alembic ---------------------------


class _Store:
    """The SDK's task store as prepare_storage sees it: a table made on demand."""

    def __init__(self) -> None:
        self.initialized = 0

    async def initialize(self) -> None:
        self.initialized += 1


async def _prepare(url: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, int]:
    """prepare_storage as serve runs it; how often the core's and the deployment's migrations
    and the task store's initialisation ran."""
    calls = {"core": 0, "deployment": 0}

    async def upgrade_core(url: str) -> None:
        calls["core"] += 1
        await core.upgrade(url)

    monkeypatch.setattr("agent.app.storage.upgrade_core", upgrade_core)
    deployment = network_deployment()
    real_migrate = deployment.migrate
    assert real_migrate is not None

    async def migrate(settings: Settings, engine: AsyncEngine) -> None:
        calls["deployment"] += 1
        await real_migrate(settings, engine)

    deployment = dataclasses.replace(deployment, migrate=migrate)
    settings = Settings(home=home, database_url=url, seed_on_start=False)
    engine = make_engine(url)
    store = _Store()
    try:
        await app.prepare_storage(settings, engine, deployment, [store])
    finally:
        await engine.dispose()
    return calls["core"], calls["deployment"], store.initialized


async def test_serve_migrates_a_new_or_older_database_and_leaves_a_current_one_alone(
    new_database: NewDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = new_database("start")
    assert await _prepare(url, tmp_path, monkeypatch) == (1, 1, 1)  # a new database
    assert await _prepare(url, tmp_path, monkeypatch) == (0, 0, 1)  # current: left alone
    await core.downgrade(url, "core_0003")
    assert await _prepare(url, tmp_path, monkeypatch) == (1, 1, 1)  # older: migrated again
    assert await core.current_revision(url) == core.HEAD
    await _record(url, inventory.VERSION_TABLE, "9999_from_the_future")
    with pytest.raises(UnknownRevisionError):
        await _prepare(url, tmp_path, monkeypatch)


def test_a_restart_on_a_current_file_imports_no_alembic(tmp_path: Path) -> None:
    """What serve does to its database before it listens, in a fresh interpreter, twice."""
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from agent.app import prepare_storage, task_store\n"
        "from agent.base.settings import Settings\n"
        "from agent.storage.engine import make_engine\n"
        "from netops.deployment import network_deployment\n"
        "async def main():\n"
        f"    url = 'sqlite+aiosqlite:///{tmp_path / 'netagent.db'}'\n"
        f"    settings = Settings(home=Path({str(tmp_path)!r}), seed_on_start=False)\n"
        "    engine = make_engine(url)\n"
        "    await prepare_storage(settings, engine, network_deployment(), [task_store(engine)])\n"
        "    await engine.dispose()\n"
        "asyncio.run(main())\n"
        "print('alembic' in sys.modules)"
    )

    def start() -> str:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    assert start() == "True"  # the first start migrates
    assert start() == "False"  # a restart finds every history at its head


def test_a_deployment_that_migrates_without_naming_its_histories_is_always_migrated(
    tmp_path: Path,
) -> None:
    network = network_deployment()
    assert network.histories() == [core.CORE, inventory.INVENTORY]
    assert dataclasses.replace(network, migrate=None, migrated=()).histories() == [core.CORE]
    unnamed = dataclasses.replace(network, migrated=())
    assert unnamed.histories() is None
    path = tmp_path / "netagent.db"
    url = f"sqlite+aiosqlite:///{path}"
    assert not _at_heads(url, network.histories())  # a new, empty file
    asyncio.run(core.upgrade(url))
    assert not _at_heads(url, network.histories())  # one history of two
    asyncio.run(inventory.upgrade(url))
    assert _at_heads(url, network.histories())
    assert not _at_heads(url, unnamed.histories())
    headless = dataclasses.replace(core.CORE, head=None)
    assert not _at_heads(url, [headless])
    (tmp_path / "garbage.db").write_bytes(b"not a database" * 100)
    with pytest.raises(DatabaseError, match="not a database"):
        _at_heads(f"sqlite:///{tmp_path / 'garbage.db'}", network.histories())


def _at_heads(url: str, histories: list[MigrationHistory] | None) -> bool:
    async def read() -> bool:
        engine = make_engine(url)
        try:
            return await at_heads(engine, histories)
        finally:
            await engine.dispose()

    return asyncio.run(read())
